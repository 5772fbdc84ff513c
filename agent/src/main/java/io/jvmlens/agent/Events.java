package io.jvmlens.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes the events of decisions §4 for one VM as JSON and packs them into batches: events joined
 * by commas, each batch under a size limit so a request stays far below the gateway's 16 MiB.
 * Items the service would reject (a field over 4096 characters) are left out here, because one
 * invalid item makes the gateway refuse the whole batch.
 */
final class Events {
    static final int MAX_TEXT = 4096;
    static final int MAX_ITEMS_PER_EVENT = 1000;
    static final int MAX_BATCH_CHARS = 512 * 1024;

    /** A class and the methodNames it declares, read from its class file. */
    record DeclaredMethods(String sourceName, String className, String[] methodNames) {}

    private final String vmId;
    private final List<String> batches = new ArrayList<>();
    private StringBuilder batch = new StringBuilder();

    Events(String vmId) {
        this.vmId = vmId;
    }

    static String heartbeat(String vmId, long time) {
        return simple("vm.heartbeat", vmId, time);
    }

    static String stop(String vmId, long time) {
        return simple("vm.stop", vmId, time);
    }

    private static String simple(String type, String vmId, long time) {
        StringBuilder out = new StringBuilder(96);
        new JsonWriter(out).beginObject().field("type", type).field("vmId", vmId).field("time", time).endObject();
        return out.toString();
    }

    /** Adds code events for the methods of loaded classes. */
    void code(List<DeclaredMethods> classes, long time) {
        StringBuilder event = null;
        JsonWriter json = null;
        int items = 0;
        for (DeclaredMethods loaded : classes) {
            if (tooLong(loaded.sourceName()) || tooLong(loaded.className())) continue;
            for (String methodName : loaded.methodNames()) {
                if (tooLong(methodName)) continue;
                if (event == null) {
                    event = new StringBuilder(64 * 1024);
                    json = begin(event, "code", time);
                    items = 0;
                }
                json.beginObject()
                        .field("sourceName", loaded.sourceName())
                        .field("className", loaded.className())
                        .field("methodName", methodName)
                        .endObject();
                if (++items == MAX_ITEMS_PER_EVENT || event.length() > MAX_BATCH_CHARS / 2) {
                    add(end(json, event));
                    event = null;
                }
            }
        }
        if (event != null) add(end(json, event));
    }

    /** Adds code events for methods called for the first time (methods=called): one event per first-call time. */
    void calls(List<CalledMethods.Call> calls) {
        StringBuilder event = null;
        JsonWriter json = null;
        int items = 0;
        long eventTime = 0;
        for (CalledMethods.Call call : calls) {
            if (tooLong(call.sourceName()) || tooLong(call.className()) || tooLong(call.methodName())) continue;
            if (event != null && (call.time() != eventTime || items == MAX_ITEMS_PER_EVENT || event.length() > MAX_BATCH_CHARS / 2)) {
                add(end(json, event));
                event = null;
            }
            if (event == null) {
                event = new StringBuilder(4096);
                eventTime = call.time();
                json = begin(event, "code", eventTime);
                items = 0;
            }
            json.beginObject()
                    .field("sourceName", call.sourceName())
                    .field("className", call.className())
                    .field("methodName", call.methodName())
                    .endObject();
            items++;
        }
        if (event != null) add(end(json, event));
    }

    /** Adds a components event. */
    void components(List<ComponentScanner.Component> components, long time) {
        StringBuilder event = null;
        JsonWriter json = null;
        int items = 0;
        for (ComponentScanner.Component component : components) {
            if (tooLong(component.componentName()) || tooLong(component.componentVersion())
                    || tooLong(component.sourceName()) || (component.groupId() != null && tooLong(component.groupId()))) continue;
            if (event == null) {
                event = new StringBuilder(4096);
                json = begin(event, "components", time);
                items = 0;
            }
            json.beginObject()
                    .field("componentName", component.componentName())
                    .field("componentVersion", component.componentVersion())
                    .field("sourceName", component.sourceName());
            if (component.groupId() != null) json.field("groupId", component.groupId());
            json.endObject();
            if (++items == MAX_ITEMS_PER_EVENT) {
                add(end(json, event));
                event = null;
            }
        }
        if (event != null) add(end(json, event));
    }

    private JsonWriter begin(StringBuilder event, String type, long time) {
        JsonWriter json = new JsonWriter(event);
        json.beginObject().field("type", type).field("vmId", vmId).field("time", time).name("items").beginArray();
        return json;
    }

    private static String end(JsonWriter json, StringBuilder event) {
        json.endArray().endObject();
        return event.toString();
    }

    /** Appends one event (JSON) to the current batch, starting a new batch when it would grow too large. */
    void add(String event) {
        if (batch.length() > 0 && batch.length() + event.length() + 1 > MAX_BATCH_CHARS) {
            batches.add(batch.toString());
            batch = new StringBuilder();
        }
        if (batch.length() > 0) batch.append(',');
        batch.append(event);
    }

    /** The batches written so far; the writer starts empty again. */
    List<String> takeBatches() {
        if (batch.length() > 0) batches.add(batch.toString());
        List<String> taken = new ArrayList<>(batches);
        batches.clear();
        batch = new StringBuilder();
        return taken;
    }

    private static boolean tooLong(String text) {
        return text.length() > MAX_TEXT;
    }
}
