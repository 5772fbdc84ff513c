package io.jvmlens.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes the events of decisions §4 for one VM as JSON bytes and packs them into batches: events joined
 * by commas, each batch about MAX_BATCH_BYTES so a request stays far below the gateway's 16 MiB. A class's
 * methods go in one code item (`methodNames`), which is about a fifth of the bytes of an item per method.
 * Items the service would reject (a field over its limit, README "Limits of an event") are left out here,
 * because one invalid item makes the gateway refuse the whole batch.
 */
final class Events {
    static final int MAX_ITEMS_PER_EVENT = 1000;
    static final int MAX_BATCH_BYTES = 512 * 1024;
    /** The service's limits, in UTF-8 bytes. */
    static final int MAX_SOURCE_NAME = 512;
    static final int MAX_CLASS_NAME = 1024;
    static final int MAX_METHOD_NAME = 1024;
    static final int MAX_COMPONENT_NAME = 256;
    static final int MAX_COMPONENT_VERSION = 128;
    static final int MAX_GROUP_ID = 256;

    /** A class and the methodNames it declares, read from its class file. */
    record DeclaredMethods(String sourceName, String className, String[] methodNames) {}

    private final String vmId;
    /** The batch being written; its last event is open while eventType is not null. */
    private final JsonWriter batch = new JsonWriter(MAX_BATCH_BYTES + 64 * 1024);
    private final List<byte[]> batches = new ArrayList<>();
    private String eventType;
    private long eventTime;
    private int eventItems;

    Events(String vmId) {
        this.vmId = vmId;
    }

    static byte[] heartbeat(String vmId, long time) {
        return simple("vm.heartbeat", vmId, time);
    }

    static byte[] stop(String vmId, long time) {
        return simple("vm.stop", vmId, time);
    }

    private static byte[] simple(String type, String vmId, long time) {
        return new JsonWriter(128).beginObject().field("type", type).field("vmId", vmId).field("time", time).endObject().toBytes();
    }

    /** Adds code events for the methods of loaded classes. */
    void code(List<DeclaredMethods> classes, long time) {
        for (DeclaredMethods loaded : classes) classItem(time, loaded.sourceName(), loaded.className(), loaded.methodNames(), 0, loaded.methodNames().length);
    }

    /**
     * Adds code events for methods called for the first time (methods=called), in the order given: one event
     * per first-call time, the methods of one class first called at the same time in one item.
     */
    void calls(List<CalledMethods.Call> calls) {
        String[] names = new String[calls.size()];
        for (int i = 0; i < names.length; i++) names[i] = calls.get(i).methodName();
        int from = 0;
        while (from < names.length) {
            CalledMethods.Call first = calls.get(from);
            int to = from + 1;
            while (to < names.length && sameClassAndTime(calls.get(to), first)) to++;
            classItem(first.time(), first.sourceName(), first.className(), names, from, to);
            from = to;
        }
    }

    private static boolean sameClassAndTime(CalledMethods.Call a, CalledMethods.Call b) {
        return a.time() == b.time() && a.className().equals(b.className()) && a.sourceName().equals(b.sourceName());
    }

    /** One code item: a class and methodNames[from, to) that fit the service's limits (none: no item). */
    private void classItem(long time, String sourceName, String className, String[] methodNames, int from, int to) {
        if (!JsonWriter.fitsUtf8(sourceName, MAX_SOURCE_NAME) || !JsonWriter.fitsUtf8(className, MAX_CLASS_NAME)) return;
        boolean started = false;
        for (int i = from; i < to; i++) {
            if (!JsonWriter.fitsUtf8(methodNames[i], MAX_METHOD_NAME)) continue;
            if (!started) {
                item("code", time).beginObject().field("sourceName", sourceName).field("className", className).name("methodNames").beginArray();
                started = true;
            }
            batch.value(methodNames[i]);
        }
        if (!started) return;
        batch.endArray().endObject();
        itemWritten();
    }

    /** Adds a components event. */
    void components(List<ComponentScanner.Component> components, long time) {
        for (ComponentScanner.Component component : components) {
            if (!JsonWriter.fitsUtf8(component.componentName(), MAX_COMPONENT_NAME)
                    || !JsonWriter.fitsUtf8(component.componentVersion(), MAX_COMPONENT_VERSION)
                    || !JsonWriter.fitsUtf8(component.sourceName(), MAX_SOURCE_NAME)
                    || (component.groupId() != null && !JsonWriter.fitsUtf8(component.groupId(), MAX_GROUP_ID))) continue;
            item("components", time).beginObject()
                    .field("componentName", component.componentName())
                    .field("componentVersion", component.componentVersion())
                    .field("sourceName", component.sourceName());
            if (component.groupId() != null) batch.field("groupId", component.groupId());
            batch.endObject();
            itemWritten();
        }
    }

    /** The batch, positioned for the next item of an event of this type and time (opened if need be). */
    private JsonWriter item(String type, long time) {
        if (eventType != null && (!eventType.equals(type) || eventTime != time)) endEvent();
        if (eventType == null) {
            batch.beginObject().field("type", type).field("vmId", vmId).field("time", time).name("items").beginArray();
            eventType = type;
            eventTime = time;
            eventItems = 0;
        }
        return batch;
    }

    private void itemWritten() {
        if (++eventItems == MAX_ITEMS_PER_EVENT) endEvent();
        if (batch.size() >= MAX_BATCH_BYTES) cut();
    }

    private void endEvent() {
        if (eventType == null) return;
        batch.endArray().endObject();
        eventType = null;
    }

    private void cut() {
        endEvent();
        if (batch.size() == 0) return;
        batches.add(batch.toBytes());
        batch.reset();
    }

    /** The batches written so far (events as JSON, comma-separated, without the enclosing brackets); the writer starts empty again. */
    List<byte[]> takeBatches() {
        cut();
        List<byte[]> taken = new ArrayList<>(batches);
        batches.clear();
        return taken;
    }
}
