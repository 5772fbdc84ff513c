package io.jvmlens.agent;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.UUID;

/**
 * A random (version 4) UUID for the vmId. Read straight from /dev/urandom where there is one:
 * UUID.randomUUID() would initialise SecureRandom and the security providers, classes and seeding
 * the application may never need and would pay for at start.
 */
final class VmIds {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private VmIds() {}

    static String random() {
        byte[] bytes = new byte[16];
        try (InputStream in = new FileInputStream("/dev/urandom")) {
            if (in.readNBytes(bytes, 0, 16) != 16) return UUID.randomUUID().toString();
        } catch (IOException | RuntimeException noUrandom) {
            return UUID.randomUUID().toString();
        }
        return format(bytes);
    }

    /** RFC 4122 version 4 layout: version nibble 4, variant bits 10. */
    static String format(byte[] bytes) {
        bytes[6] = (byte) ((bytes[6] & 0x0f) | 0x40);
        bytes[8] = (byte) ((bytes[8] & 0x3f) | 0x80);
        StringBuilder out = new StringBuilder(36);
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) out.append('-');
            out.append(HEX[(bytes[i] >> 4) & 0x0f]).append(HEX[bytes[i] & 0x0f]);
        }
        return out.toString();
    }
}
