package io.jvmlens.agent;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * The vm.start event (decisions §4): the agent's identity, the VM inventory of interface §2.2,
 * jvmInfo and tags. Environment variables go by name only unless sendEnvValues is set, since
 * their values often hold secrets; the agent's own API key is never sent.
 */
final class VmStart {
    private static final String API_KEY_VARIABLE = "JVMLENS_AGENT_API_KEY";

    private VmStart() {}

    static byte[] event(String vmId, long time, String agentVersion, String agentRevision, Map<String, String> tags,
                        boolean sendEnvValues, Properties properties, Map<String, String> environment) {
        JsonWriter json = new JsonWriter(16 * 1024);
        json.beginObject()
                .field("type", "vm.start")
                .field("vmId", vmId)
                .field("time", time)
                .field("agentVersion", agentVersion)
                .field("agentRevision", agentRevision);
        json.name("inventory").beginObject();
        json.map("systemProperties", systemProperties(properties));
        json.field("hostName", hostName(environment));
        json.map("osEnvironment", osEnvironment(environment, sendEnvValues));
        json.field("mainMethod", mainMethod(properties));
        CpuInfo.read().write(json);
        json.endObject();
        json.name("jvmInfo").beginObject()
                .field("pid", pid())
                .field("javaVersion", text(properties.getProperty("java.runtime.version", properties.getProperty("java.version"))))
                .field("javaVendor", text(properties.getProperty("java.vm.vendor")))
                .field("vmName", text(properties.getProperty("java.vm.name")))
                .field("maxHeapBytes", Runtime.getRuntime().maxMemory())
                .endObject();
        if (!tags.isEmpty()) json.map("tags", tags);
        json.endObject();
        return json.toBytes();
    }

    /**
     * This process's id. On Linux /proc/self names it; ProcessHandle.current() costs ~15 ms at
     * start (it initialises the process reaper machinery), so it is only the fallback.
     */
    static long pid() {
        try {
            Path self = Paths.get("/proc/self");
            if (Files.isSymbolicLink(self)) return Long.parseLong(Files.readSymbolicLink(self).toString());
        } catch (IOException | RuntimeException ignored) {
            // fall back below
        }
        return ProcessHandle.current().pid();
    }

    /** Every string-valued system property, sorted by name. */
    static Map<String, String> systemProperties(Properties properties) {
        Map<String, String> sorted = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            String value = properties.getProperty(name);
            if (value != null) sorted.put(name, value);
        }
        return sorted;
    }

    static Map<String, String> osEnvironment(Map<String, String> environment, boolean sendValues) {
        Map<String, String> sorted = new TreeMap<>();
        for (Map.Entry<String, String> variable : environment.entrySet()) {
            boolean withValue = sendValues && !variable.getKey().equals(API_KEY_VARIABLE);
            sorted.put(variable.getKey(), withValue ? variable.getValue() : "");
        }
        return sorted;
    }

    /** The kernel's host name; DNS is the last resort, because a lookup can hang for seconds. */
    static String hostName(Map<String, String> environment) {
        Path kernel = Paths.get("/proc/sys/kernel/hostname");
        try {
            if (Files.isReadable(kernel)) {
                String name = new String(Files.readAllBytes(kernel), StandardCharsets.UTF_8).trim();
                if (!name.isEmpty()) return name;
            }
        } catch (IOException ignored) {
            // try the next source
        }
        for (String variable : new String[] {"HOSTNAME", "COMPUTERNAME"}) {
            String name = environment.get(variable);
            if (name != null && !name.trim().isEmpty()) return name.trim();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /**
     * The main class and method, "com.example.App.main". The launcher leaves the command in
     * sun.java.command: a class name, "app.jar args" (the class is the JAR's Main-Class), or
     * "module/class" with -m.
     */
    static String mainMethod(Properties properties) {
        String mainClass = properties.getProperty("jdk.module.main.class");
        String command = properties.getProperty("sun.java.command", "").trim();
        if (mainClass == null && !command.isEmpty()) {
            int jar = command.toLowerCase(java.util.Locale.ROOT).indexOf(".jar");
            if (jar > 0 && (command.length() == jar + 4 || command.charAt(jar + 4) == ' ')) {
                mainClass = jarMainClass(command.substring(0, jar + 4));
            } else {
                int space = command.indexOf(' ');
                mainClass = space < 0 ? command : command.substring(0, space);
                int slash = mainClass.indexOf('/');
                if (slash >= 0) mainClass = mainClass.substring(slash + 1);
            }
        }
        return mainClass == null || mainClass.isEmpty() ? "" : mainClass + ".main";
    }

    private static String jarMainClass(String jarPath) {
        try (JarFile jar = new JarFile(jarPath, false)) {
            Manifest manifest = jar.getManifest();
            String mainClass = manifest == null ? null : manifest.getMainAttributes().getValue("Main-Class");
            return mainClass == null ? null : mainClass.trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String text(String value) {
        return value == null ? "" : value;
    }
}
