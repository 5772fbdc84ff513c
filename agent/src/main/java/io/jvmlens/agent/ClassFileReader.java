package io.jvmlens.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads the declared methods straight from class-file bytes (JVMS §4): a tiny constant-pool reader.
 * Reading bytes instead of calling getDeclaredMethods() never loads, links or initialises a class,
 * so the agent cannot change the order in which the application's classes initialise.
 */
final class ClassFileReader {
    /**
     * One method_info: its name, descriptor and access flags; where it starts and ends in the class file,
     * and where its Code attribute starts (-1 without one: abstract and native methods).
     */
    record MethodInfo(String name, String descriptor, int access, int start, int end, int code) {
        /**
         * Whether the source declares it: <clinit> and bridge methods are compiler plumbing, and bridges would
         * also repeat a declared method's name with the erased parameter types. Both modes report only these.
         */
        boolean declaredInSource() {
            return !name.equals("<clinit>") && (access & ACC_BRIDGE) == 0;
        }
    }

    /** The layout of a class file, for a writer that copies it with changes (MethodProbes). */
    record Layout(int constantPoolCount, int constantPoolEnd, int methodsCount, List<MethodInfo> methods, int methodsEnd, ClassFileReader reader) {}

    private static final int ACC_BRIDGE = 0x0040;

    private final byte[] bytes;
    private int position;
    /** Offset of each CONSTANT_Utf8 entry's length field; 0 for other entries. */
    private int[] utf8Offsets;

    private ClassFileReader(byte[] bytes) {
        this.bytes = bytes;
    }

    /** The methods of a class file, in declaration order. Throws IllegalArgumentException on malformed bytes. */
    static List<MethodInfo> methods(byte[] classFile) {
        return layout(classFile).methods();
    }

    /** Where the constant pool and the methods of a class file are. Throws IllegalArgumentException on malformed bytes. */
    static Layout layout(byte[] classFile) {
        try {
            return new ClassFileReader(classFile).readLayout();
        } catch (IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("truncated class file", e);
        }
    }

    private Layout readLayout() {
        if (u4() != 0xCAFEBABE) throw new IllegalArgumentException("not a class file");
        position += 4; // minor_version, major_version
        int constantPoolCount = u2At(position);
        readConstantPool();
        int constantPoolEnd = position;
        position += 6; // access_flags, this_class, super_class
        int interfaceCount = u2(); // read first: "position += 2 * u2()" would lose u2's own advance
        position += 2 * interfaceCount;
        int fieldCount = u2();
        for (int i = 0; i < fieldCount; i++) {
            position += 6; // access_flags, name_index, descriptor_index
            skipAttributes();
        }
        int methodCount = u2();
        List<MethodInfo> methods = new ArrayList<>(methodCount);
        for (int i = 0; i < methodCount; i++) {
            int start = position;
            int access = u2();
            String name = utf8(u2());
            String descriptor = utf8(u2());
            int code = -1;
            int attributes = u2();
            for (int a = 0; a < attributes; a++) {
                if (isUtf8(u2At(position), "Code")) code = position;
                position += 2;
                int length = u4();
                if (length < 0) throw new IllegalArgumentException("attribute too long");
                position += length;
            }
            methods.add(new MethodInfo(name, descriptor, access, start, position, code));
        }
        if (position > bytes.length) throw new IllegalArgumentException("truncated class file");
        return new Layout(constantPoolCount, constantPoolEnd, methodCount, methods, position, this);
    }

    /** Whether constant `index` is the Utf8 entry `text` (ASCII), without decoding it. */
    boolean isUtf8(int index, String text) {
        int offset = index > 0 && index < utf8Offsets.length ? utf8Offsets[index] : 0;
        if (offset == 0 || u2At(offset) != text.length()) return false;
        for (int i = 0; i < text.length(); i++) if (bytes[offset + 2 + i] != text.charAt(i)) return false;
        return true;
    }

    private void readConstantPool() {
        int count = u2();
        utf8Offsets = new int[count];
        for (int index = 1; index < count; index++) {
            int tag = bytes[position++] & 0xFF;
            switch (tag) {
                case 1 -> { // Utf8
                    utf8Offsets[index] = position;
                    position += 2 + u2At(position);
                }
                case 7, 8, 16, 19, 20 -> position += 2; // Class, String, MethodType, Module, Package
                case 15 -> position += 3; // MethodHandle
                case 3, 4, 9, 10, 11, 12, 17, 18 -> position += 4; // Integer, Float, refs, NameAndType, (Invoke)Dynamic
                case 5, 6 -> { // Long and Double take two constant-pool slots (JVMS §4.4.5)
                    position += 8;
                    index++;
                }
                default -> throw new IllegalArgumentException("unknown constant-pool tag " + tag);
            }
        }
    }

    private void skipAttributes() {
        int count = u2();
        for (int i = 0; i < count; i++) {
            position += 2;
            int length = u4();
            if (length < 0) throw new IllegalArgumentException("attribute too long");
            position += length;
        }
    }

    /** Decodes the "modified UTF-8" of class files (JVMS §4.4.7): no 4-byte forms, NUL as two bytes. */
    private String utf8(int index) {
        int offset = index > 0 && index < utf8Offsets.length ? utf8Offsets[index] : 0;
        if (offset == 0) throw new IllegalArgumentException("constant " + index + " is not a Utf8 entry");
        int length = u2At(offset);
        int at = offset + 2;
        int end = at + length;
        if (end > bytes.length) throw new IllegalArgumentException("truncated Utf8 entry");
        char[] chars = new char[length];
        int n = 0;
        while (at < end) {
            int c = bytes[at] & 0xFF;
            if (c < 0x80) {
                chars[n++] = (char) c;
                at++;
            } else if ((c & 0xE0) == 0xC0) {
                chars[n++] = (char) (((c & 0x1F) << 6) | (bytes[at + 1] & 0x3F));
                at += 2;
            } else {
                chars[n++] = (char) (((c & 0x0F) << 12) | ((bytes[at + 1] & 0x3F) << 6) | (bytes[at + 2] & 0x3F));
                at += 3;
            }
        }
        return new String(chars, 0, n);
    }

    private int u2() {
        int value = u2At(position);
        position += 2;
        return value;
    }

    private int u2At(int at) {
        return u2(bytes, at);
    }

    /** The big-endian unsigned 16-bit value at `at`. */
    static int u2(byte[] bytes, int at) {
        return ((bytes[at] & 0xFF) << 8) | (bytes[at + 1] & 0xFF);
    }

    /** The big-endian 32-bit value at `at`. */
    static int u4(byte[] bytes, int at) {
        return ((bytes[at] & 0xFF) << 24) | ((bytes[at + 1] & 0xFF) << 16) | ((bytes[at + 2] & 0xFF) << 8) | (bytes[at + 3] & 0xFF);
    }

    private int u4() {
        int value = ((bytes[position] & 0xFF) << 24) | ((bytes[position + 1] & 0xFF) << 16)
                | ((bytes[position + 2] & 0xFF) << 8) | (bytes[position + 3] & 0xFF);
        position += 4;
        return value;
    }
}
