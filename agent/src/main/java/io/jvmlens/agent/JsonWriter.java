package io.jvmlens.agent;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * Hand-written JSON (the agent has no dependencies), written straight as UTF-8 bytes into a growable
 * array: objects, arrays, strings and integers, with commas placed automatically. A batch of code is
 * written once and sent from here, with no String or StringBuilder copies between. Strings are escaped
 * per RFC 8259; lone surrogates are escaped too, so the bytes are always valid UTF-8.
 */
final class JsonWriter {
    private static final byte[] HEX = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

    private byte[] out;
    private int size;
    private boolean needsComma;

    JsonWriter(int capacity) {
        out = new byte[Math.max(16, capacity)];
    }

    /** Bytes written so far. */
    int size() {
        return size;
    }

    /** A copy of what was written. */
    byte[] toBytes() {
        return Arrays.copyOf(out, size);
    }

    /** Starts over, keeping the array. */
    void reset() {
        size = 0;
        needsComma = false;
    }

    @Override
    public String toString() {
        return new String(out, 0, size, StandardCharsets.UTF_8);
    }

    JsonWriter beginObject() {
        comma();
        put('{');
        needsComma = false;
        return this;
    }

    JsonWriter endObject() {
        put('}');
        needsComma = true;
        return this;
    }

    JsonWriter beginArray() {
        comma();
        put('[');
        needsComma = false;
        return this;
    }

    JsonWriter endArray() {
        put(']');
        needsComma = true;
        return this;
    }

    JsonWriter name(String name) {
        comma();
        string(name);
        put(':');
        needsComma = false;
        return this;
    }

    JsonWriter value(String value) {
        comma();
        if (value == null) {
            ascii("null");
        } else {
            string(value);
        }
        needsComma = true;
        return this;
    }

    JsonWriter value(long value) {
        comma();
        ascii(Long.toString(value));
        needsComma = true;
        return this;
    }

    JsonWriter field(String name, String value) {
        return name(name).value(value);
    }

    JsonWriter field(String name, long value) {
        return name(name).value(value);
    }

    /** A string map as an object, in the map's own order. */
    JsonWriter map(String name, Map<String, String> entries) {
        name(name).beginObject();
        for (Map.Entry<String, String> entry : entries.entrySet()) field(entry.getKey(), entry.getValue());
        return endObject();
    }

    /** Whether `value` takes at most maxBytes in UTF-8 (as the service counts them); counts only when its length cannot tell. */
    static boolean fitsUtf8(String value, int maxBytes) {
        int length = value.length();
        if (length > maxBytes) return false;
        if (length * 3 <= maxBytes) return true;
        int bytes = length;
        for (int i = 0; i < length && bytes <= maxBytes; i++) {
            char c = value.charAt(i);
            // 3 bytes per surrogate: right for a lone one (the service reads it as U+FFFD), 6 for a pair's 4, never under
            if (c >= 0x80) bytes += c < 0x800 ? 1 : 2;
        }
        return bytes <= maxBytes;
    }

    private void comma() {
        if (needsComma) put(',');
    }

    private void put(char c) {
        if (size == out.length) grow(1);
        out[size++] = (byte) c;
    }

    private void ascii(String text) {
        int length = text.length();
        if (size + length > out.length) grow(length);
        for (int i = 0; i < length; i++) out[size++] = (byte) text.charAt(i);
    }

    private void grow(int needed) {
        out = Arrays.copyOf(out, Math.max(out.length * 2, size + needed));
    }

    private void string(String value) {
        int length = value.length();
        // Room for the worst case, a six-byte escape per char, so the loop needs no bounds checks of its own.
        if (size + 6 * length + 2 > out.length) grow(6 * length + 2);
        byte[] to = out;
        int at = size;
        to[at++] = '"';
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c >= 0x20 && c != '"' && c != '\\') {
                    to[at++] = (byte) c;
                    continue;
                }
                to[at++] = '\\';
                switch (c) {
                    case '"': to[at++] = '"'; break;
                    case '\\': to[at++] = '\\'; break;
                    case '\n': to[at++] = 'n'; break;
                    case '\r': to[at++] = 'r'; break;
                    case '\t': to[at++] = 't'; break;
                    case '\b': to[at++] = 'b'; break;
                    case '\f': to[at++] = 'f'; break;
                    default: at = unicodeEscape(to, at, c);
                }
            } else if (c < 0x800) {
                to[at++] = (byte) (0xC0 | (c >> 6));
                to[at++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(value.charAt(i + 1))) {
                int code = Character.toCodePoint(c, value.charAt(++i));
                to[at++] = (byte) (0xF0 | (code >> 18));
                to[at++] = (byte) (0x80 | ((code >> 12) & 0x3F));
                to[at++] = (byte) (0x80 | ((code >> 6) & 0x3F));
                to[at++] = (byte) (0x80 | (code & 0x3F));
            } else if (Character.isSurrogate(c)) {
                to[at++] = '\\';
                at = unicodeEscape(to, at, c);
            } else {
                to[at++] = (byte) (0xE0 | (c >> 12));
                to[at++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                to[at++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        to[at++] = '"';
        size = at;
    }

    /** Writes uXXXX after the backslash; the position after it. */
    private static int unicodeEscape(byte[] to, int at, char c) {
        to[at++] = 'u';
        to[at++] = HEX[(c >> 12) & 0xF];
        to[at++] = HEX[(c >> 8) & 0xF];
        to[at++] = HEX[(c >> 4) & 0xF];
        to[at++] = HEX[c & 0xF];
        return at;
    }
}
