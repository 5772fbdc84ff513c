package io.jvmlens.agent;

import io.jvmlens.probe.FirstCalls;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of {@code java -javaagent:jvmlens-agent.jar=gateway=...,apiKey=...} (decisions §12).
 * premain does the least it can (parse options, register the transformer, start the reporter
 * thread) and never throws: an exception here would abort the application's start.
 */
public final class Agent {
    /** Class records waiting for the reporter thread, at most; beyond, they are dropped and counted. */
    private static final int MAX_PENDING_CLASSES = 100_000;
    private static final long MAX_PENDING_BYTES = 64L * 1024 * 1024;

    private Agent() {}

    public static void premain(String argument, Instrumentation instrumentation) {
        try {
            start(argument, instrumentation);
        } catch (Throwable failure) {
            AgentLog.line("not started: " + failure);
        }
    }

    private static void start(String argument, Instrumentation instrumentation) {
        long startTime = System.currentTimeMillis();
        List<String> problems = new ArrayList<>();
        AgentOptions options = AgentOptions.parse(argument, System.getenv(), problems);
        preloadTransformerClasses(options.methodsCalled);
        Observations observations = new Observations(MAX_PENDING_CLASSES, MAX_PENDING_BYTES);
        JarAliases aliases = JarAliases.find(System.getProperties(), options.libDirs);
        CalledMethods calledMethods = options.methodsCalled ? new CalledMethods() : null;
        CodeTransformer transformer = new CodeTransformer(observations, aliases, calledMethods);
        Reporter reporter = new Reporter(options, problems, observations, transformer, aliases, calledMethods, startTime);
        instrumentation.addTransformer(transformer, false);
        reporter.start();
        Runtime.getRuntime().addShutdownHook(reporter.shutdownHook());
    }

    /**
     * Loads the classes the transformer uses before it is registered, so the first application
     * class to load does not make the transformer load the agent's own classes in the middle of
     * the application's class loading.
     */
    private static void preloadTransformerClasses(boolean methodsCalled) {
        // A class literal resolves (loads) the class without initialising it.
        Class<?>[] classes = {
            CodeSources.class, JarAliases.class, Observations.class, Observations.LoadedClass.class, Observations.Location.class,
        };
        if (!methodsCalled) return;
        Class<?>[] probes = {
            FirstCalls.class, MethodProbes.class, MethodProbes.Result.class, CalledMethods.class, CalledMethods.Ids.class,
            CalledMethods.ProbedClass.class, ClassFileReader.class, ClassFileReader.Layout.class, ClassFileReader.MethodInfo.class,
        };
    }
}
