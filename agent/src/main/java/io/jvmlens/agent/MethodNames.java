package io.jvmlens.agent;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Turns a method name and its JVM descriptor into the methodName of decisions §4:
 * {@code main(java.lang.String[])}, {@code put(java.lang.Object, int)}.
 * Type names follow Class.getTypeName(): dots between packages, '$' kept for nested classes,
 * "[]" per array dimension; the return type is left out as in Java source.
 */
final class MethodNames {
    private MethodNames() {}

    /** The methodNames a class file declares, in declaration order and without repeats. */
    static String[] declaredIn(byte[] classFile) {
        Set<String> names = new LinkedHashSet<>();
        ClassFileReader.Layout layout = ClassFileReader.layout(classFile);
        ClassFileReader reader = layout.reader();
        for (ClassFileReader.MethodInfo method : layout.methods()) {
            if (reader.declaredInSource(method)) names.add(of(reader.utf8(method.nameIndex()), reader.utf8(method.descriptorIndex())));
        }
        return names.toArray(new String[0]);
    }

    static String of(String name, String descriptor) {
        StringBuilder out = new StringBuilder(name.length() + descriptor.length() + 16);
        out.append(name).append('(');
        if (descriptor.isEmpty() || descriptor.charAt(0) != '(') throw new IllegalArgumentException("bad descriptor " + descriptor);
        int at = 1;
        boolean first = true;
        while (descriptor.charAt(at) != ')') {
            if (!first) out.append(", ");
            first = false;
            int dimensions = 0;
            while (descriptor.charAt(at) == '[') {
                dimensions++;
                at++;
            }
            char kind = descriptor.charAt(at);
            if (kind == 'L') {
                int end = descriptor.indexOf(';', at);
                if (end < 0) throw new IllegalArgumentException("bad descriptor " + descriptor);
                for (int i = at + 1; i < end; i++) {
                    char c = descriptor.charAt(i);
                    out.append(c == '/' ? '.' : c);
                }
                at = end + 1;
            } else {
                out.append(primitive(kind, descriptor));
                at++;
            }
            for (int i = 0; i < dimensions; i++) out.append("[]");
        }
        return out.append(')').toString();
    }

    private static String primitive(char kind, String descriptor) {
        switch (kind) {
            case 'Z': return "boolean";
            case 'B': return "byte";
            case 'C': return "char";
            case 'S': return "short";
            case 'I': return "int";
            case 'J': return "long";
            case 'F': return "float";
            case 'D': return "double";
            default: throw new IllegalArgumentException("bad descriptor " + descriptor);
        }
    }
}
