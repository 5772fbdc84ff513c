package io.jvmlens.agent;

import java.util.ArrayDeque;

/**
 * Batches waiting for the gateway, oldest first. Bounded by count and size: while the service is
 * unreachable the oldest batches are dropped and counted, so the agent's memory stays flat.
 * Used by the reporter thread only.
 */
final class Outbox {
    private final ArrayDeque<String> batches = new ArrayDeque<>();
    private final int maxBatches;
    private final long maxChars;
    private long chars;
    private long dropped;

    Outbox(int maxBatches, long maxChars) {
        this.maxBatches = maxBatches;
        this.maxChars = maxChars;
    }

    /** Appends a batch (events as JSON, comma-separated, without the enclosing brackets). */
    void add(String batch) {
        batches.addLast(batch);
        chars += batch.length();
        while (batches.size() > maxBatches || (chars > maxChars && batches.size() > 1)) {
            chars -= batches.removeFirst().length();
            dropped++;
        }
    }

    String peek() {
        return batches.peekFirst();
    }

    void removeFirst() {
        chars -= batches.removeFirst().length();
    }

    boolean isEmpty() {
        return batches.isEmpty();
    }

    int size() {
        return batches.size();
    }

    /** Batches dropped since the agent started because the outbox was full. */
    long dropped() {
        return dropped;
    }
}
