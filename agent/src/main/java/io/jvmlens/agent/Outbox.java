package io.jvmlens.agent;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * Batches waiting for the gateway, oldest first. Bounded by count and size: while the service is
 * unreachable, code batches are dropped (oldest first) and counted, so the agent's memory stays flat.
 * Batches that hold components are kept whatever the bounds: they are sent once per VM life, a JAR
 * at a time, and without them the service can match no CVE to the VM. Used by the reporter thread only.
 */
final class Outbox {
    private final ArrayDeque<Entry> batches = new ArrayDeque<>();
    private final int maxBatches;
    private final long maxBytes;
    private long bytes;
    private long dropped;

    private record Entry(byte[] batch, boolean kept) {}

    Outbox(int maxBatches, long maxBytes) {
        this.maxBatches = maxBatches;
        this.maxBytes = maxBytes;
    }

    /** Appends a batch (events as JSON, comma-separated, without the enclosing brackets); `kept`: never dropped. */
    void add(byte[] batch, boolean kept) {
        batches.addLast(new Entry(batch, kept));
        bytes += batch.length;
        while (batches.size() > maxBatches || bytes > maxBytes) {
            if (!dropOldestDroppable()) break;
        }
    }

    /** Drops the oldest batch that may be dropped, never the newest (a batch over the size bound alone is sent). */
    private boolean dropOldestDroppable() {
        Entry newest = batches.peekLast();
        for (Iterator<Entry> it = batches.iterator(); it.hasNext(); ) {
            Entry entry = it.next();
            if (entry == newest) return false;
            if (entry.kept) continue;
            it.remove();
            bytes -= entry.batch.length;
            dropped++;
            return true;
        }
        return false;
    }

    byte[] peek() {
        Entry first = batches.peekFirst();
        return first == null ? null : first.batch;
    }

    void removeFirst() {
        bytes -= batches.removeFirst().batch.length;
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
