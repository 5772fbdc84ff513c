package io.jvmlens.probe;

/**
 * The probe of methods=called: every instrumented method starts with {@code FirstCalls.hit(id)}. It lives in
 * the agent's JAR, which the JVM puts on the application class path, so the code of every class loader that
 * delegates to the application class loader can call it (the agent probes no other). After a method's first
 * call, a call costs two array loads and a branch, which the JIT inlines.
 * Ids are handed out in pages before the class that uses them is defined; a page is never replaced.
 */
public final class FirstCalls {
    private static final int PAGE_BITS = 12;
    private static final int PAGE_SIZE = 1 << PAGE_BITS;
    private static final int MAX_PAGES = 1 << 15;
    /** At most this many methods carry a probe (134 million); past it, classes are left as they are. */
    public static final int MAX_IDS = MAX_PAGES * PAGE_SIZE;

    private static final boolean[][] CALLED = new boolean[MAX_PAGES][];
    private static final long[][] TIMES = new long[MAX_PAGES][];
    private static int next;

    private FirstCalls() {}

    /** At the entry of an instrumented method. Never throws. */
    public static void hit(int id) {
        boolean[] page = CALLED[id >>> PAGE_BITS];
        if (page != null && !page[id & (PAGE_SIZE - 1)]) first(id);
    }

    private static void first(int id) {
        int slot = id & (PAGE_SIZE - 1);
        long[] times = TIMES[id >>> PAGE_BITS];
        // Two threads racing here both write about the same time: no lock on the application's path.
        if (times[slot] == 0) times[slot] = System.currentTimeMillis();
        CALLED[id >>> PAGE_BITS][slot] = true;
    }

    /** The first of `count` consecutive new ids, their pages ready; -1 when the table is full. */
    public static synchronized int reserve(int count) {
        if (count < 0 || count > MAX_IDS - next) return -1;
        int first = next;
        next += count;
        for (int page = first >>> PAGE_BITS; page <= (next - 1) >>> PAGE_BITS && count > 0; page++) {
            if (TIMES[page] == null) {
                TIMES[page] = new long[PAGE_SIZE];
                CALLED[page] = new boolean[PAGE_SIZE];
            }
        }
        return first;
    }

    /** When method `id` was first called (epoch ms), or 0 while it has not been (or the write is not visible yet). */
    public static long firstCallTime(int id) {
        long[] times = TIMES[id >>> PAGE_BITS];
        return times == null ? 0 : times[id & (PAGE_SIZE - 1)];
    }
}
