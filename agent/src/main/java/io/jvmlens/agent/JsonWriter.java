package io.jvmlens.agent;

import java.util.Map;

/**
 * Hand-written JSON (the agent has no dependencies): objects, strings and integers, with commas
 * placed automatically. Strings are escaped per RFC 8259; lone surrogates are escaped too, so the
 * UTF-8 body is always valid and nothing is silently replaced by '?'.
 */
final class JsonWriter {
    private final StringBuilder out;
    private boolean needsComma;

    JsonWriter(StringBuilder out) {
        this.out = out;
    }

    JsonWriter beginObject() {
        comma();
        out.append('{');
        needsComma = false;
        return this;
    }

    JsonWriter endObject() {
        out.append('}');
        needsComma = true;
        return this;
    }

    JsonWriter beginArray() {
        comma();
        out.append('[');
        needsComma = false;
        return this;
    }

    JsonWriter endArray() {
        out.append(']');
        needsComma = true;
        return this;
    }

    JsonWriter name(String name) {
        comma();
        string(out, name);
        out.append(':');
        needsComma = false;
        return this;
    }

    JsonWriter value(String value) {
        comma();
        if (value == null) {
            out.append("null");
        } else {
            string(out, value);
        }
        needsComma = true;
        return this;
    }

    JsonWriter value(long value) {
        comma();
        out.append(value);
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

    private void comma() {
        if (needsComma) out.append(',');
    }

    static void string(StringBuilder out, String value) {
        out.append('"');
        int length = value.length();
        int plain = 0;
        while (plain < length && needsNoEscape(value.charAt(plain))) plain++;
        out.append(value, 0, plain); // the common case: nothing to escape, one bulk copy
        for (int i = plain; i < length; i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    if (c < 0x20) {
                        unicodeEscape(out, c);
                    } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(value.charAt(i + 1))) {
                        out.append(c).append(value.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        unicodeEscape(out, c);
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    private static boolean needsNoEscape(char c) {
        return c >= 0x20 && c != '"' && c != '\\' && (c < Character.MIN_SURROGATE || c > Character.MAX_SURROGATE);
    }

    private static void unicodeEscape(StringBuilder out, char c) {
        String hex = Integer.toHexString(c);
        out.append("\\u");
        for (int pad = hex.length(); pad < 4; pad++) out.append('0');
        out.append(hex);
    }
}
