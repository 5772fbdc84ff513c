package io.jvmlens.agent;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What application threads saw while loading classes and the reporter thread has not taken yet.
 * Non-blocking on the producer side and bounded (in classes and in class-file bytes held): when the
 * reporter cannot keep up, new records are dropped and counted rather than letting the heap grow.
 */
final class Observations {
    /**
     * A class as first seen from one source, with its class-file bytes: the reporter thread reads
     * the methods from them, so the loading thread only pays for a queue insert.
     */
    static final class LoadedClass {
        final String sourceName;
        final String className;
        final byte[] classFile;

        LoadedClass(String sourceName, String className, byte[] classFile) {
            this.sourceName = sourceName;
            this.className = className;
            this.classFile = classFile;
        }
    }

    /** A code-source location seen for the first time: a JAR whose components may not be known yet. */
    static final class Location {
        final String location;
        final String sourceName;

        Location(String location, String sourceName) {
            this.location = location;
            this.sourceName = sourceName;
        }
    }

    private final int maxClasses;
    private final long maxBytes;
    private final ConcurrentLinkedQueue<LoadedClass> classes = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queuedClasses = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicLong droppedClasses = new AtomicLong();
    private final ConcurrentLinkedQueue<Location> locations = new ConcurrentLinkedQueue<>();

    Observations(int maxClasses, long maxBytes) {
        this.maxClasses = maxClasses;
        this.maxBytes = maxBytes;
    }

    void classLoaded(LoadedClass loaded) {
        int size = loaded.classFile.length;
        if (queuedClasses.incrementAndGet() > maxClasses || queuedBytes.addAndGet(size) > maxBytes) {
            queuedClasses.decrementAndGet();
            queuedBytes.addAndGet(-size);
            droppedClasses.incrementAndGet();
            return;
        }
        classes.add(loaded);
    }

    LoadedClass pollClass() {
        LoadedClass loaded = classes.poll();
        if (loaded != null) {
            queuedClasses.decrementAndGet();
            queuedBytes.addAndGet(-loaded.classFile.length);
        }
        return loaded;
    }

    void locationSeen(String location, String sourceName) {
        locations.add(new Location(location, sourceName));
    }

    Location pollLocation() {
        return locations.poll();
    }

    long droppedClasses() {
        return droppedClasses.get();
    }
}
