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
     * One method_info: the constant-pool indexes of its name and descriptor (decoded only when asked, see
     * utf8), its access flags; where it starts and ends in the class file, and where its Code attribute
     * starts (-1 without one: abstract and native methods).
     */
    record MethodInfo(int nameIndex, int descriptorIndex, int access, int start, int end, int code) {}

    /** The layout of a class file, for a writer that copies it with changes (MethodProbes). */
    record Layout(int constantPoolCount, int constantPoolEnd, int methodsCount, List<MethodInfo> methods, int methodsEnd, ClassFileReader reader) {}

    private static final int ACC_BRIDGE = 0x0040;

    private final byte[] bytes;
    private int position;
    /** Offset of each CONSTANT_Utf8 entry's length field; 0 for other entries. */
    private int[] utf8Offsets;
    /** isUtf8's memory: texts (by identity) and the index each was last found at. */
    private final String[] knownTexts = new String[4];
    private final int[] knownIndexes = new int[4];

    private ClassFileReader(byte[] bytes) {
        this.bytes = bytes;
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
            int name = u2();
            int descriptor = u2();
            // Checked now, decoded later if at all: both must be Utf8 entries within the class file.
            utf8Offset(name);
            utf8Offset(descriptor);
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

    /**
     * Whether the source declares the method: <clinit> and bridge methods are compiler plumbing, and bridges
     * would also repeat a declared method's name with the erased parameter types. Both modes report only these.
     */
    boolean declaredInSource(MethodInfo method) {
        return (method.access() & ACC_BRIDGE) == 0 && !isUtf8(method.nameIndex(), "<clinit>");
    }

    /**
     * Whether constant `index` is the Utf8 entry `text` (ASCII), without decoding it. The last index found
     * for each of a few texts is remembered: every method asks about the same "Code" and "StackMapTable".
     */
    boolean isUtf8(int index, String text) {
        for (int k = 0; k < knownTexts.length && knownTexts[k] != null; k++) {
            if (knownTexts[k] == text && knownIndexes[k] == index) return true;
        }
        if (!equalsUtf8(index, text)) return false;
        for (int k = 0; k < knownTexts.length; k++) {
            if (knownTexts[k] == null || knownTexts[k] == text) {
                knownTexts[k] = text;
                knownIndexes[k] = index;
                break;
            }
        }
        return true;
    }

    private boolean equalsUtf8(int index, String text) {
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

    /** Where the Utf8 entry `index` (its length, then its bytes) is in the class file. */
    int utf8Offset(int index) {
        int offset = index > 0 && index < utf8Offsets.length ? utf8Offsets[index] : 0;
        if (offset == 0) throw new IllegalArgumentException("constant " + index + " is not a Utf8 entry");
        if (offset + 2 + u2At(offset) > bytes.length) throw new IllegalArgumentException("truncated Utf8 entry");
        return offset;
    }

    /** The Utf8 entry `index`, decoded. */
    String utf8(int index) {
        return utf8At(bytes, utf8Offset(index));
    }

    /** Decodes the "modified UTF-8" of class files (JVMS §4.4.7) at `offset` (its u2 length first): no 4-byte forms, NUL as two bytes. */
    static String utf8At(byte[] bytes, int offset) {
        int length = u2(bytes, offset);
        int at = offset + 2;
        int end = at + length;
        char[] chars = new char[length];
        int n = 0;
        while (at < end) {
            int c = bytes[at] & 0xFF;
            if (c < 0x80) {
                chars[n++] = (char) c;
                at++;
            } else if ((c & 0xE0) == 0xC0 && at + 2 <= end) {
                chars[n++] = (char) (((c & 0x1F) << 6) | (bytes[at + 1] & 0x3F));
                at += 2;
            } else if (at + 3 <= end) {
                chars[n++] = (char) (((c & 0x0F) << 12) | ((bytes[at + 1] & 0x3F) << 6) | (bytes[at + 2] & 0x3F));
                at += 3;
            } else {
                throw new IllegalArgumentException("malformed Utf8 entry");
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
