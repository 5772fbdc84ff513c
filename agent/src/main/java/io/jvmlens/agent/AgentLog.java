package io.jvmlens.agent;

/**
 * The agent's only output: lines on standard error prefixed "jvmlens agent: " (decisions §12 —
 * one line at start, then nothing unless something goes wrong). Logging never throws.
 */
final class AgentLog {
    private AgentLog() {}

    static void line(String message) {
        try {
            System.err.println("jvmlens agent: " + message);
        } catch (Throwable ignored) {
            // stderr closed or broken: the application must not notice.
        }
    }
}
