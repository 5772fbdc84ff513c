package io.jvmlens.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The cpuInfo object of interface §2.2. "Number of Processors" counts the host's logical CPUs;
 * "Number of Assigned Logical Cores" is what this JVM may use (containers and CPU affinity lower it).
 * Linux describes the CPU in /proc/cpuinfo; elsewhere the JVM's own view is all there is.
 */
final class CpuInfo {
    int processors;
    int assignedLogicalCores;
    String vendor = "";
    String modelName = "";
    int physicalCores;

    static CpuInfo read() {
        int assigned = Runtime.getRuntime().availableProcessors();
        Path proc = Paths.get("/proc/cpuinfo");
        if (Files.isReadable(proc)) {
            try {
                return parse(Files.readAllLines(proc, StandardCharsets.ISO_8859_1), assigned);
            } catch (IOException | RuntimeException ignored) {
                // fall through to the JVM's view
            }
        }
        CpuInfo info = new CpuInfo();
        info.processors = assigned;
        info.assignedLogicalCores = assigned;
        info.physicalCores = assigned;
        return info;
    }

    /** Parses /proc/cpuinfo lines ("key\t: value", one block per logical CPU). */
    static CpuInfo parse(List<String> lines, int assigned) {
        CpuInfo info = new CpuInfo();
        info.assignedLogicalCores = assigned;
        Set<String> cores = new HashSet<>();
        Set<String> packages = new HashSet<>();
        int coresPerPackage = 0;
        String physicalId = "0";
        String implementer = "";
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String key = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            switch (key) {
                case "processor": info.processors++; break;
                case "vendor_id": if (info.vendor.isEmpty()) info.vendor = value; break;
                case "CPU implementer": if (implementer.isEmpty()) implementer = value; break;
                case "model name": case "Model": case "cpu model": if (info.modelName.isEmpty()) info.modelName = value; break;
                case "physical id": physicalId = value; packages.add(value); break;
                case "core id": cores.add(physicalId + "/" + value); break;
                case "cpu cores": coresPerPackage = parseInt(value); break;
                default: break;
            }
        }
        if (info.vendor.isEmpty()) info.vendor = armVendor(implementer);
        if (info.processors == 0) info.processors = assigned;
        if (!cores.isEmpty()) {
            info.physicalCores = cores.size();
        } else if (coresPerPackage > 0) {
            info.physicalCores = coresPerPackage * Math.max(1, packages.size());
        } else {
            info.physicalCores = info.processors; // ARM and most VMs: no SMT information, one thread per core
        }
        return info;
    }

    /** ARM's /proc/cpuinfo names the designer by its JEDEC code only. */
    private static String armVendor(String implementer) {
        switch (implementer.toLowerCase(java.util.Locale.ROOT)) {
            case "": return "";
            case "0x41": return "ARM";
            case "0x42": return "Broadcom";
            case "0x43": return "Cavium";
            case "0x48": return "HiSilicon";
            case "0x4e": return "NVIDIA";
            case "0x50": return "APM";
            case "0x51": return "Qualcomm";
            case "0x61": return "Apple";
            case "0xc0": return "Ampere";
            default: return implementer;
        }
    }

    private static int parseInt(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    void write(JsonWriter json) {
        json.name("cpuInfo").beginObject()
                .field("Number of Processors", processors)
                .field("Number of Assigned Logical Cores", assignedLogicalCores)
                .field("CPU Vendor", vendor)
                .field("CPU Model Name", modelName)
                .field("Number of Physical Cores", physicalCores)
                .endObject();
    }
}
