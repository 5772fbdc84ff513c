package io.jvmlens.agent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntUnaryOperator;

/**
 * Puts {@code io.jvmlens.probe.FirstCalls.hit(id)} at the entry of each method of a class file (methods=called).
 * The probe is 8 bytes, {@code sipush id} or {@code ldc_w id}, {@code invokestatic}, two {@code nop}s: a multiple
 * of 4, so the padding of tableswitch and lookupswitch stays right, and without a branch, so no stack map
 * frame is added. Every code offset after it moves by 8: the exception table, the first stack map frame and every Uninitialized type,
 * line numbers and local variable ranges. A method with any other attribute in its Code that holds code
 * offsets (type annotations), or that would outgrow the 64 KiB code limit, keeps its code and is counted.
 */
final class MethodProbes {
    static final String PROBE_CLASS = "io/jvmlens/probe/FirstCalls";
    private static final int PROBE_LENGTH = 8;
    private static final int MAX_CODE_LENGTH = 65_535;
    private static final int MAX_CONSTANTS = 65_535;

    /**
     * The rewritten class: the probed methods in order, their ids consecutive from firstId, and how many
     * methods with code were left without a probe. `signatures` holds each probed method's name and then its
     * descriptor as the class file's Utf8 entries (length, bytes), copied, not decoded: decoding waits for the
     * method's first call, on the reporter thread, and a class keeps one small array rather than two Strings
     * per method.
     */
    record Result(byte[] bytes, int firstId, int methods, byte[] signatures, int skipped) {}

    private MethodProbes() {}

    /**
     * Rewrites a class file; `reserve` hands out `count` consecutive ids (or -1). Null when no method gets a
     * probe. Throws IllegalArgumentException for a class file it cannot read.
     */
    static Result rewrite(byte[] bytes, IntUnaryOperator reserve) {
        ClassFileReader.Layout layout = ClassFileReader.layout(bytes);
        ClassFileReader reader = layout.reader();
        List<ClassFileReader.MethodInfo> probed = new ArrayList<>();
        int skipped = 0;
        int growth = 0;
        for (ClassFileReader.MethodInfo method : layout.methods()) {
            if (method.code() < 0 || !reader.declaredInSource(method)) continue;
            int grows = probeGrowth(bytes, method.code(), reader);
            if (grows < 0) {
                skipped++;
            } else {
                probed.add(method);
                growth += grows;
            }
        }
        // Six constants for the probe's method reference, and one Integer per id that sipush cannot hold.
        if (probed.isEmpty() || layout.constantPoolCount() + 6 + probed.size() > MAX_CONSTANTS) return null;
        int firstId = reserve.applyAsInt(probed.size());
        if (firstId < 0) return null;

        int count = layout.constantPoolCount();
        // The new constants: Utf8 class name, Class, Utf8 "hit", Utf8 "(I)V", NameAndType, Methodref.
        Buffer constants = new Buffer(64 + probed.size() * 5);
        int className = count++;
        utf8(constants, PROBE_CLASS);
        int classRef = count++;
        constants.write(7);
        u2(constants, className);
        int hitName = count++;
        utf8(constants, "hit");
        int hitType = count++;
        utf8(constants, "(I)V");
        int nameAndType = count++;
        constants.write(12);
        u2(constants, hitName);
        u2(constants, hitType);
        int methodRef = count++;
        constants.write(10);
        u2(constants, classRef);
        u2(constants, nameAndType);
        int[] idConstants = new int[probed.size()];
        for (int i = 0; i < probed.size(); i++) {
            int id = firstId + i;
            if (id <= Short.MAX_VALUE) continue;
            idConstants[i] = count++;
            constants.write(3);
            u4(constants, id);
        }
        // Sized exactly, so the class's new bytes are this array and not a copy of it.
        Buffer out = new Buffer(bytes.length + constants.size + growth);
        out.write(bytes, 0, 8);
        u2(out, count);
        out.write(bytes, 10, layout.constantPoolEnd() - 10);
        out.write(constants.data, 0, constants.size);

        int copied = layout.constantPoolEnd();
        Buffer signatures = new Buffer(probed.size() * 32);
        for (int i = 0; i < probed.size(); i++) {
            ClassFileReader.MethodInfo method = probed.get(i);
            copyUtf8(signatures, bytes, reader.utf8Offset(method.nameIndex()));
            copyUtf8(signatures, bytes, reader.utf8Offset(method.descriptorIndex()));
            out.write(bytes, copied, method.code() - copied);
            writeCode(out, bytes, method.code(), probe(firstId + i, idConstants[i], methodRef), reader);
            copied = method.code() + 6 + ClassFileReader.u4(bytes, method.code() + 2);
        }
        out.write(bytes, copied, bytes.length - copied);
        return new Result(out.toByteArray(), firstId, probed.size(), signatures.toByteArray(), skipped);
    }

    /**
     * How many bytes the probe adds to a Code attribute (its length, plus 2 when the first stack map frame
     * needs its longer form), or -1 when the attribute holds something the rewriter does not move or has
     * no room for the probe.
     */
    private static int probeGrowth(byte[] bytes, int code, ClassFileReader reader) {
        int codeLength = ClassFileReader.u4(bytes, code + 10);
        if (codeLength + PROBE_LENGTH > MAX_CODE_LENGTH) return -1;
        int growth = PROBE_LENGTH;
        int at = code + 14 + codeLength;
        at += 2 + 8 * ClassFileReader.u2(bytes, at);
        int attributes = ClassFileReader.u2(bytes, at);
        at += 2;
        for (int i = 0; i < attributes; i++) {
            int name = ClassFileReader.u2(bytes, at);
            if (reader.isUtf8(name, "StackMapTable")) {
                if (ClassFileReader.u2(bytes, at + 6) > 0) growth += firstFrameGrowth(bytes[at + 8] & 0xFF);
            } else if (!reader.isUtf8(name, "LineNumberTable") && !reader.isUtf8(name, "LocalVariableTable")
                    && !reader.isUtf8(name, "LocalVariableTypeTable")) {
                return -1;
            }
            at += 6 + ClassFileReader.u4(bytes, at + 2);
        }
        return growth;
    }

    /** 2 when a first frame of this type, its offset moved by the probe, no longer fits its short form (see writeStackMapTable). */
    private static int firstFrameGrowth(int type) {
        if (type >= 128) return 0;
        int delta = (type < 64 ? type : type - 64) + PROBE_LENGTH;
        return delta < 64 ? 0 : 2;
    }

    /** Copies the Utf8 entry at `offset` (its u2 length, then its bytes). */
    private static void copyUtf8(Buffer out, byte[] bytes, int offset) {
        out.write(bytes, offset, 2 + ClassFileReader.u2(bytes, offset));
    }

    private static byte[] probe(int id, int idConstant, int methodRef) {
        byte[] probe = new byte[PROBE_LENGTH];
        if (id <= Short.MAX_VALUE) {
            probe[0] = 0x11; // sipush
            probe[1] = (byte) (id >>> 8);
            probe[2] = (byte) id;
        } else {
            probe[0] = 0x13; // ldc_w
            probe[1] = (byte) (idConstant >>> 8);
            probe[2] = (byte) idConstant;
        }
        probe[3] = (byte) 0xB8; // invokestatic
        probe[4] = (byte) (methodRef >>> 8);
        probe[5] = (byte) methodRef;
        // probe[6], probe[7]: nop (0), to keep the length a multiple of 4
        return probe;
    }

    /** Writes the Code attribute at `code` with the probe in front of its bytecode and every offset moved. */
    private static void writeCode(Buffer out, byte[] bytes, int code, byte[] probe, ClassFileReader reader) {
        u2(out, ClassFileReader.u2(bytes, code)); // attribute_name_index ("Code")
        int lengthAt = out.size;
        u4(out, 0); // attribute_length, set below
        u2(out, Math.max(1, ClassFileReader.u2(bytes, code + 6))); // max_stack: the probe pushes its id
        u2(out, ClassFileReader.u2(bytes, code + 8)); // max_locals
        int codeLength = ClassFileReader.u4(bytes, code + 10);
        u4(out, codeLength + PROBE_LENGTH);
        out.write(probe, 0, PROBE_LENGTH);
        out.write(bytes, code + 14, codeLength);
        int at = code + 14 + codeLength;
        int handlers = ClassFileReader.u2(bytes, at);
        u2(out, handlers);
        at += 2;
        for (int i = 0; i < handlers; i++, at += 8) {
            u2(out, ClassFileReader.u2(bytes, at) + PROBE_LENGTH); // start_pc
            u2(out, ClassFileReader.u2(bytes, at + 2) + PROBE_LENGTH); // end_pc
            u2(out, ClassFileReader.u2(bytes, at + 4) + PROBE_LENGTH); // handler_pc
            u2(out, ClassFileReader.u2(bytes, at + 6)); // catch_type
        }
        int attributes = ClassFileReader.u2(bytes, at);
        u2(out, attributes);
        at += 2;
        for (int i = 0; i < attributes; i++) {
            int name = ClassFileReader.u2(bytes, at);
            int length = ClassFileReader.u4(bytes, at + 2);
            int start = at + 6;
            u2(out, name);
            if (reader.isUtf8(name, "StackMapTable")) {
                writeStackMapTable(out, bytes, start, length);
            } else {
                // LineNumberTable (4-byte entries) and LocalVariable(Type)Table (10-byte entries): start_pc first.
                int entrySize = reader.isUtf8(name, "LineNumberTable") ? 4 : 10;
                u4(out, length);
                int entries = ClassFileReader.u2(bytes, start);
                u2(out, entries);
                for (int e = 0; e < entries; e++) {
                    int entry = start + 2 + e * entrySize;
                    u2(out, ClassFileReader.u2(bytes, entry) + PROBE_LENGTH);
                    out.write(bytes, entry + 2, entrySize - 2);
                }
            }
            at = start + length;
        }
        out.patchU4(lengthAt, out.size - lengthAt - 4);
    }

    /**
     * The first frame's offset is absolute: it moves by the probe's length, in a longer form when it must.
     * Every Uninitialized(offset) type, which names the offset of a {@code new}, moves too.
     */
    private static void writeStackMapTable(Buffer out, byte[] bytes, int start, int length) {
        int entries = ClassFileReader.u2(bytes, start);
        int lengthAt = out.size;
        u4(out, 0); // attribute_length, set below
        u2(out, entries);
        int at = start + 2;
        for (int e = 0; e < entries; e++) {
            int type = bytes[at++] & 0xFF;
            if (type < 128) { // same_frame, same_locals_1_stack_item_frame: offset_delta in the type
                int delta = (type < 64 ? type : type - 64) + (e == 0 ? PROBE_LENGTH : 0);
                if (delta < 64) {
                    out.write(type < 64 ? delta : 64 + delta);
                } else {
                    out.write(type < 64 ? 251 : 247); // the extended forms
                    u2(out, delta);
                }
                if (type >= 64) at = copyTypes(out, bytes, at, 1);
                continue;
            }
            if (type < 247) throw new IllegalArgumentException("reserved stack map frame type " + type);
            out.write(type);
            u2(out, ClassFileReader.u2(bytes, at) + (e == 0 ? PROBE_LENGTH : 0));
            at += 2;
            if (type == 247) {
                at = copyTypes(out, bytes, at, 1);
            } else if (type >= 252 && type <= 254) {
                at = copyTypes(out, bytes, at, type - 251);
            } else if (type == 255) {
                int locals = ClassFileReader.u2(bytes, at);
                u2(out, locals);
                at = copyTypes(out, bytes, at + 2, locals);
                int stack = ClassFileReader.u2(bytes, at);
                u2(out, stack);
                at = copyTypes(out, bytes, at + 2, stack);
            }
        }
        if (at != start + length) throw new IllegalArgumentException("StackMapTable length does not match its frames");
        out.patchU4(lengthAt, out.size - lengthAt - 4);
    }

    /** Copies `count` verification_type_info items, moving the offset of each Uninitialized one; the position after them. */
    private static int copyTypes(Buffer out, byte[] bytes, int at, int count) {
        for (int i = 0; i < count; i++) {
            int tag = bytes[at++] & 0xFF;
            out.write(tag);
            if (tag == 7) { // Object: a constant-pool class
                u2(out, ClassFileReader.u2(bytes, at));
                at += 2;
            } else if (tag == 8) { // Uninitialized: the offset of its new instruction
                u2(out, ClassFileReader.u2(bytes, at) + PROBE_LENGTH);
                at += 2;
            } else if (tag > 8) {
                throw new IllegalArgumentException("unknown verification type " + tag);
            }
        }
        return at;
    }

    /** A growable byte array without ByteArrayOutputStream's locking: one per rewrite, one thread. */
    private static final class Buffer {
        byte[] data;
        int size;

        Buffer(int capacity) {
            data = new byte[capacity];
        }

        void write(int value) {
            if (size == data.length) data = Arrays.copyOf(data, data.length * 2);
            data[size++] = (byte) value;
        }

        void write(byte[] from, int offset, int length) {
            if (size + length > data.length) data = Arrays.copyOf(data, Math.max(data.length * 2, size + length));
            System.arraycopy(from, offset, data, size, length);
            size += length;
        }

        void patchU4(int at, int value) {
            data[at] = (byte) (value >>> 24);
            data[at + 1] = (byte) (value >>> 16);
            data[at + 2] = (byte) (value >>> 8);
            data[at + 3] = (byte) value;
        }

        byte[] toByteArray() {
            return size == data.length ? data : Arrays.copyOf(data, size);
        }
    }

    private static void utf8(Buffer out, String ascii) {
        out.write(1);
        u2(out, ascii.length());
        for (int i = 0; i < ascii.length(); i++) out.write(ascii.charAt(i));
    }

    private static void u2(Buffer out, int value) {
        out.write(value >>> 8);
        out.write(value);
    }

    private static void u4(Buffer out, int value) {
        out.write(value >>> 24);
        out.write(value >>> 16);
        out.write(value >>> 8);
        out.write(value);
    }
}
