package io.jvmlens.agent;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Test-only bridge to the agent's package-private pure parts (test/agent/units.test.ts): each stdin
 * line is a case, fields base64-encoded and separated by spaces ("-" for null); each stdout line is
 * the JSON answer, or {"error": "..."}. One JVM runs a whole table.
 */
public final class Probe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] encoded = line.split(" ", -1);
            String[] fields = new String[encoded.length];
            for (int i = 0; i < encoded.length; i++) {
                fields[i] = encoded[i].equals("-") ? null : new String(Base64.getDecoder().decode(encoded[i]), StandardCharsets.UTF_8);
            }
            JsonWriter answer = new JsonWriter(256);
            try {
                answer(fields, answer);
            } catch (Exception e) {
                answer.reset();
                answer.beginObject().field("error", e.toString()).endObject();
            }
            out.append(answer).append('\n');
        }
        System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
        System.out.flush();
    }

    private static void answer(String[] f, JsonWriter json) throws Exception {
        switch (f[0]) {
            case "methodName":
                json.value(MethodNames.of(f[1], f[2]));
                break;
            case "classFile":
                strings(json, MethodNames.declaredIn(Files.readAllBytes(Paths.get(f[1]))));
                break;
            case "crossCheck": // methodNames from the class-file bytes and from reflection, for one loadable class
                crossCheck(f[1], json);
                break;
            case "sourceName":
                json.value(CodeSources.sourceName(f[1]));
                break;
            case "jarAlias": { // the user's name of a location, given java.class.path and the libDirs option
                Properties properties = new Properties();
                properties.setProperty("java.class.path", f[1]);
                json.value(JarAliases.find(properties, f[2]).nameOf(f[3]));
                break;
            }
            case "fileName":
                component(json, ComponentScanner.fromFileName(f[1]));
                break;
            case "scanFile":
                scan(json, ComponentScanner.scanFile(Paths.get(f[1]), f[2]));
                break;
            case "scanLocation":
                ComponentScanner.Scan scan = ComponentScanner.scanLocation(f[1], f[2]);
                if (scan == null) json.value((String) null); else scan(json, scan);
                break;
            case "tags": {
                List<String> problems = new ArrayList<>();
                Map<String, String> tags = Tags.combine(f[1], f[2], f[3], problems);
                json.beginObject().map("tags", tags).name("problems");
                strings(json, problems.toArray(new String[0]));
                json.endObject();
                break;
            }
            case "options": {
                Map<String, String> environment = new HashMap<>();
                for (int i = 2; i + 1 < f.length; i += 2) environment.put(f[i], f[i + 1]);
                List<String> problems = new ArrayList<>();
                AgentOptions options = AgentOptions.parse(f[1], environment, problems);
                json.beginObject()
                        .field("gateway", options.gateway)
                        .field("apiKey", options.apiKey)
                        .field("flushMs", options.flushMs)
                        .field("heartbeatMs", options.heartbeatMs)
                        .field("stopWaitMs", options.stopWaitMs)
                        .field("codeRefreshMs", options.codeRefreshMs)
                        .field("maxBatches", options.maxBatches)
                        .field("sendEnvValues", String.valueOf(options.sendEnvValues))
                        .field("tags", options.tags)
                        .field("methods", options.methodsCalled ? "called" : "loaded")
                        .name("problems");
                strings(json, problems.toArray(new String[0]));
                json.endObject();
                break;
            }
            case "json":
                json.value(f[1]);
                break;
            case "cpu": {
                CpuInfo info = CpuInfo.parse(Arrays.asList(f[1].split("\n", -1)), 4);
                json.beginObject();
                info.write(json);
                json.endObject();
                break;
            }
            case "mainMethod": {
                Properties properties = new Properties();
                if (f[1] != null) properties.setProperty("sun.java.command", f[1]);
                if (f.length > 2 && f[2] != null) properties.setProperty("jdk.module.main.class", f[2]);
                json.value(VmStart.mainMethod(properties));
                break;
            }
            case "outbox": { // maxBatches maxBytes batch...: what stays, oldest first, and how many were dropped
                Outbox outbox = new Outbox(Integer.parseInt(f[1]), Long.parseLong(f[2]));
                // A batch written "!batch" is one the outbox keeps (components).
                for (int i = 3; i < f.length; i++) outbox.add((f[i].startsWith("!") ? f[i].substring(1) : f[i]).getBytes(StandardCharsets.UTF_8), f[i].startsWith("!"));
                long dropped = outbox.dropped();
                List<String> kept = new ArrayList<>();
                for (byte[] batch = outbox.peek(); batch != null; batch = outbox.peek()) {
                    kept.add(new String(batch, StandardCharsets.UTF_8));
                    outbox.removeFirst();
                }
                json.beginObject().field("dropped", dropped).name("kept");
                strings(json, kept.toArray(new String[0]));
                json.endObject();
                break;
            }
            case "codeEvents": { // copies sourceName className methodName...: the batches of `copies` such classes (className#i)
                int copies = Integer.parseInt(f[1]);
                List<Events.DeclaredMethods> classes = new ArrayList<>();
                String[] methodNames = Arrays.copyOfRange(f, 4, f.length);
                for (int i = 0; i < copies; i++) classes.add(new Events.DeclaredMethods(f[2], copies == 1 ? f[3] : f[3] + "#" + i, methodNames));
                Events events = new Events("vm-1");
                events.code(classes, 1_700_000_000_000L);
                List<String> batches = new ArrayList<>();
                for (byte[] batch : events.takeBatches()) batches.add(new String(batch, StandardCharsets.UTF_8));
                strings(json, batches.toArray(new String[0]));
                break;
            }
            default:
                throw new IllegalArgumentException("unknown case " + f[0]);
        }
    }

    private static void crossCheck(String className, JsonWriter json) throws Exception {
        Class<?> type = Class.forName(className, false, ClassLoader.getSystemClassLoader());
        byte[] bytes;
        try (InputStream in = ClassLoader.getSystemResourceAsStream(className.replace('.', '/') + ".class")) {
            bytes = in.readAllBytes();
        }
        List<String> reflected = new ArrayList<>();
        for (Constructor<?> constructor : type.getDeclaredConstructors()) reflected.add("<init>" + parameters(constructor.getParameterTypes()));
        for (Method method : type.getDeclaredMethods()) {
            if (!method.isBridge()) reflected.add(method.getName() + parameters(method.getParameterTypes()));
        }
        json.beginObject().name("fromBytes");
        strings(json, MethodNames.declaredIn(bytes));
        json.name("fromReflection");
        strings(json, reflected.toArray(new String[0]));
        json.endObject();
    }

    private static String parameters(Class<?>[] types) {
        StringBuilder out = new StringBuilder("(");
        for (int i = 0; i < types.length; i++) out.append(i == 0 ? "" : ", ").append(types[i].getTypeName());
        return out.append(')').toString();
    }

    private static void scan(JsonWriter json, ComponentScanner.Scan scan) {
        json.beginObject().name("components").beginArray();
        for (ComponentScanner.Component component : scan.components()) component(json, component);
        json.endArray().name("manifestClassPath");
        strings(json, scan.manifestClassPath().toArray(new String[0]));
        json.endObject();
    }

    private static void component(JsonWriter json, ComponentScanner.Component component) {
        json.beginObject()
                .field("componentName", component.componentName())
                .field("componentVersion", component.componentVersion())
                .field("sourceName", component.sourceName())
                .field("groupId", component.groupId())
                .endObject();
    }

    private static void strings(JsonWriter json, String[] values) {
        json.beginArray();
        for (String value : values) json.value(value);
        json.endArray();
    }
}
