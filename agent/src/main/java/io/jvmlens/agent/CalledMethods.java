package io.jvmlens.agent;

import io.jvmlens.probe.FirstCalls;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.IntUnaryOperator;

/**
 * The methods that carry a probe (methods=called): loading threads register each probed class with the
 * ids of its methods, and the reporter thread asks FirstCalls which of them have run since it last looked.
 */
final class CalledMethods {
    /** Hands out probe ids from FirstCalls; a class, not a lambda, so premain can load it before any transform. */
    static final class Ids implements IntUnaryOperator {
        @Override
        public int applyAsInt(int count) {
            return FirstCalls.reserve(count);
        }
    }

    /** A class as probed: its methods in id order from firstId, their names and descriptors as MethodProbes.Result keeps them. */
    static final class ProbedClass {
        final String sourceName;
        final String className;
        final int firstId;
        final int methods;
        final byte[] signatures;
        /** Reporter thread only. */
        final boolean[] reported;
        int unreported;

        ProbedClass(String sourceName, String className, MethodProbes.Result result) {
            this.sourceName = sourceName;
            this.className = className;
            this.firstId = result.firstId();
            this.methods = result.methods();
            this.signatures = result.signatures();
            this.reported = new boolean[methods];
            this.unreported = methods;
        }
    }

    /** A method's first call, as the code event reports it. */
    record Call(String sourceName, String className, String methodName, long time) {}

    private final ConcurrentLinkedQueue<ProbedClass> registered = new ConcurrentLinkedQueue<>();
    /** Classes with methods not called yet; reporter thread only. */
    private final List<ProbedClass> watched = new ArrayList<>();

    /** On the loading thread, before the class's code can run. */
    void register(ProbedClass probed) {
        registered.add(probed);
    }

    /**
     * The methods first called since the last call, in the order of their first call (and, for one time, by
     * class, so that Events can put a class's methods in one item). Reporter thread only.
     */
    List<Call> takeNewCalls() {
        for (ProbedClass probed = registered.poll(); probed != null; probed = registered.poll()) watched.add(probed);
        List<Call> calls = new ArrayList<>();
        for (int c = watched.size() - 1; c >= 0; c--) {
            ProbedClass probed = watched.get(c);
            byte[] signatures = probed.signatures;
            int name = 0; // where method i's name is in signatures; its descriptor follows
            for (int i = 0; i < probed.methods; i++) {
                int descriptor = name + 2 + ClassFileReader.u2(signatures, name);
                int next = descriptor + 2 + ClassFileReader.u2(signatures, descriptor);
                long time = probed.reported[i] ? 0 : FirstCalls.firstCallTime(probed.firstId + i);
                if (time != 0) {
                    probed.reported[i] = true;
                    probed.unreported--;
                    try {
                        String methodName = MethodNames.of(ClassFileReader.utf8At(signatures, name), ClassFileReader.utf8At(signatures, descriptor));
                        calls.add(new Call(probed.sourceName, probed.className, methodName, time));
                    } catch (IllegalArgumentException malformed) {
                        // a descriptor the JVM accepted but MethodNames cannot name: nothing to report
                    }
                }
                name = next;
            }
            // Fully reported classes leave the list, so the scan shrinks as the application warms up.
            if (probed.unreported == 0) {
                watched.set(c, watched.get(watched.size() - 1));
                watched.remove(watched.size() - 1);
            }
        }
        calls.sort((a, b) -> {
            if (a.time() != b.time()) return Long.compare(a.time(), b.time());
            int bySource = a.sourceName().compareTo(b.sourceName());
            return bySource != 0 ? bySource : a.className().compareTo(b.className());
        });
        return calls;
    }
}
