package io.jvmlens.agent;

import io.jvmlens.probe.FirstCalls;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;

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
        preloadTransformerClasses();
        Observations observations = new Observations(MAX_PENDING_CLASSES, MAX_PENDING_BYTES);
        JarAliases aliases = JarAliases.find(System.getProperties(), options.libDirs);
        CalledMethods calledMethods = options.methodsCalled ? installProbe(instrumentation) : null;
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
    /**
     * Puts the probe class (io.jvmlens.probe.FirstCalls, packed inside this JAR as jvmlens-probe.jar) on the
     * bootstrap class path, where the code of every class loader finds it. Null, with a line saying why,
     * when it cannot: the agent then reports loaded methods.
     */
    private static CalledMethods installProbe(Instrumentation instrumentation) {
        try (InputStream in = Agent.class.getResourceAsStream("jvmlens-probe.jar")) {
            if (in == null) throw new IOException("jvmlens-probe.jar is missing from the agent JAR");
            // Not Files.createTempFile: its SecureRandom costs a short-lived JVM tens of milliseconds. CREATE_NEW
            // (O_EXCL) refuses an existing file or link, so nobody can plant the bootstrap code under this name.
            Path jar = Paths.get(System.getProperty("java.io.tmpdir"), "jvmlens-probe-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + ".jar");
            try (OutputStream out = Files.newOutputStream(jar, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                in.transferTo(out);
            }
            jar.toFile().deleteOnExit();
            instrumentation.appendToBootstrapClassLoaderSearch(new JarFile(jar.toFile()));
            // Loaded now, not inside the first transform.
            Class<?>[] classes = {FirstCalls.class, MethodProbes.class, MethodProbes.Result.class, CalledMethods.class, CalledMethods.Ids.class, CalledMethods.ProbedClass.class, ClassFileReader.class, ClassFileReader.Layout.class, ClassFileReader.MethodInfo.class};
            return new CalledMethods();
        } catch (IOException | RuntimeException | LinkageError failure) {
            AgentLog.line("methods=called is not available, reporting loaded methods: " + failure);
            return null;
        }
    }

    private static void preloadTransformerClasses() {
        // A class literal resolves (loads) the class without initialising it.
        Class<?>[] classes = {
            CodeSources.class, JarAliases.class, Observations.class, Observations.LoadedClass.class, Observations.Location.class,
        };
    }
}
