package io.jvmlens.agent;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What application threads saw while loading classes and the reporter thread has not taken yet.
 * Non-blocking on the producer side and bounded: when the reporter cannot keep up, new records are
 * dropped and counted rather than letting the application's heap grow.
 */
final class Observations {
    /** A class and the methodNames it declares, as first seen from one source. */
    static final class LoadedClass {
        final String sourceName;
        final String className;
        final String[] methodNames;

        LoadedClass(String sourceName, String className, String[] methodNames) {
            this.sourceName = sourceName;
            this.className = className;
            this.methodNames = methodNames;
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

    private final int capacity;
    private final ConcurrentLinkedQueue<LoadedClass> classes = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queuedClasses = new AtomicInteger();
    private final AtomicLong droppedClasses = new AtomicLong();
    private final ConcurrentLinkedQueue<Location> locations = new ConcurrentLinkedQueue<>();

    Observations(int capacity) {
        this.capacity = capacity;
    }

    void classLoaded(LoadedClass loaded) {
        if (queuedClasses.incrementAndGet() > capacity) {
            queuedClasses.decrementAndGet();
            droppedClasses.incrementAndGet();
            return;
        }
        classes.add(loaded);
    }

    LoadedClass pollClass() {
        LoadedClass loaded = classes.poll();
        if (loaded != null) queuedClasses.decrementAndGet();
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
