package io.jvmlens.agent;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;
import java.util.zip.InflaterInputStream;

/**
 * The code this VM has reported, kept compressed so that it can be reported again every codeRefreshMs. A class
 * is reported once, when it loads (or a method when it first runs), and the service's lastSeen would stay at
 * that time while the VM keeps running the code for months: a code report, which keeps items seen since its
 * `from` (30 days by default), would then call a long-running server's code dead. A refresh goes one chunk per
 * flush, so a large VM does not fill the outbox at once. Reporter thread only.
 */
final class ReportedCode {
    /** Uncompressed bytes of a chunk, at least (a refresh sends one chunk per flush: a batch or two). */
    private static final int CHUNK_BYTES = 256 * 1024;

    private final long refreshMs;
    private final List<byte[]> chunks = new ArrayList<>();
    private final ByteArrayOutputStream open = new ByteArrayOutputStream();
    private final DataOutputStream out = new DataOutputStream(open);
    private long nextRefresh;
    /** The chunk the refresh under way sends next; -1 while none is under way. */
    private int refreshing = -1;

    ReportedCode(long refreshMs, long startTime) {
        this.refreshMs = refreshMs;
        this.nextRefresh = startTime + refreshMs;
    }

    void add(List<Events.DeclaredMethods> classes) throws IOException {
        for (Events.DeclaredMethods loaded : classes) write(loaded.sourceName(), loaded.className(), loaded.methodNames(), 0, loaded.methodNames().length);
        if (open.size() >= CHUNK_BYTES) seal();
    }

    /** Methods first called (methods=called), a class's consecutive calls as one record. */
    void addCalls(List<CalledMethods.Call> calls) throws IOException {
        String[] names = new String[calls.size()];
        for (int i = 0; i < names.length; i++) names[i] = calls.get(i).methodName();
        int from = 0;
        while (from < names.length) {
            CalledMethods.Call first = calls.get(from);
            int to = from + 1;
            while (to < names.length && calls.get(to).className().equals(first.className()) && calls.get(to).sourceName().equals(first.sourceName())) to++;
            write(first.sourceName(), first.className(), names, from, to);
            from = to;
        }
        if (open.size() >= CHUNK_BYTES) seal();
    }

    /** What to report again now: a chunk per call while a refresh is under way (every refreshMs), else nothing. */
    List<Events.DeclaredMethods> due(long now) throws IOException {
        if (refreshing < 0) {
            if (now < nextRefresh) return List.of();
            seal();
            refreshing = 0;
            nextRefresh = now + refreshMs;
        }
        if (refreshing >= chunks.size()) {
            refreshing = -1;
            return List.of();
        }
        return read(chunks.get(refreshing++));
    }

    private void write(String sourceName, String className, String[] methodNames, int from, int to) throws IOException {
        writeString(sourceName);
        writeString(className);
        out.writeInt(to - from);
        for (int i = from; i < to; i++) writeString(methodNames[i]);
    }

    private void writeString(String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private void seal() {
        if (open.size() == 0) return;
        Deflater deflater = new Deflater(Deflater.BEST_SPEED);
        deflater.setInput(open.toByteArray());
        deflater.finish();
        ByteArrayOutputStream compressed = new ByteArrayOutputStream(open.size() / 4);
        byte[] buffer = new byte[8192];
        while (!deflater.finished()) compressed.write(buffer, 0, deflater.deflate(buffer));
        deflater.end();
        chunks.add(compressed.toByteArray());
        open.reset();
    }

    private static List<Events.DeclaredMethods> read(byte[] chunk) throws IOException {
        List<Events.DeclaredMethods> classes = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new InflaterInputStream(new ByteArrayInputStream(chunk)))) {
            for (;;) {
                String sourceName;
                try {
                    sourceName = readString(in);
                } catch (EOFException end) {
                    return classes;
                }
                String className = readString(in);
                String[] methodNames = new String[in.readInt()];
                for (int i = 0; i < methodNames.length; i++) methodNames[i] = readString(in);
                classes.add(new Events.DeclaredMethods(sourceName, className, methodNames));
            }
        }
    }

    private static String readString(DataInputStream in) throws IOException {
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
