package io.jvmlens.agent;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Delivers batches to the gateway in order (decisions §4): the outbox, the vm.start event that
 * leads every request until the gateway has accepted it (the service refuses events of a vmId it
 * does not know), back-off while the gateway fails, and the few log lines about it.
 * Used by the reporter thread only.
 */
final class Delivery {
    /** Retries while the gateway fails come at most this far apart (±20% jitter): a returning gateway is reached within seconds. */
    private static final long MAX_BACKOFF_MS = 5_000;
    /** An outage is logged once it has lasted this long: a short-lived JVM logs only at its exit. */
    private static final long OUTAGE_LOG_MS = 2_000;
    private static final long MAX_OUTBOX_BYTES = 16L * 1024 * 1024;
    private static final int REQUEST_TIMEOUT_MS = 10_000;
    /** A 503 means the service is starting (decisions §3): only worth a log line when it lasts. */
    private static final long QUIET_503_MS = 30_000;

    private final AgentOptions options;
    private final GatewayClient client;
    private final byte[] startEvent;
    private final Outbox outbox;
    private boolean startAccepted;
    private long lastDelivery;
    private long nextAttempt;
    private long backoffMs;
    private int lastStatus;
    private long failingSince = -1;
    private boolean outageLogged;
    private long droppedBeforeOutage;
    private long rejectedBatches;
    private final Runnable reintroduce;

    /** reintroduce: called when the service no longer knows the VM, to queue everything sent once per VM life again. */
    Delivery(AgentOptions options, GatewayClient client, byte[] startEvent, long startTime, Runnable reintroduce) {
        this.options = options;
        this.client = client;
        this.startEvent = startEvent;
        this.reintroduce = reintroduce;
        this.outbox = new Outbox(options.maxBatches, MAX_OUTBOX_BYTES);
        this.lastDelivery = startTime;
    }

    /** A batch that may be dropped while the gateway is unreachable (code, heartbeats). */
    void add(byte[] batch) {
        outbox.add(batch, false);
    }

    /** A batch never dropped (components, vm.stop): the VM means little to the service without it. */
    void addKept(byte[] batch) {
        outbox.add(batch, true);
    }

    /** Nothing waits, the VM is known to the service and nothing was delivered for `idleMs`: time for a heartbeat. */
    boolean idle(long now, long idleMs) {
        return outbox.isEmpty() && startAccepted && now - lastDelivery >= idleMs;
    }

    /** Sends what waits, unless backing off after a failure. */
    void deliverIfDue(long now) {
        if (now >= nextAttempt) deliver(Long.MAX_VALUE);
    }

    /**
     * At shutdown: one attempt before the deadline, retried only while the service answers 503
     * (it is starting and will take the batch soon); an unreachable gateway must not hold up every
     * exit of the application. Logs what could not be delivered.
     */
    void deliverBefore(long deadline) {
        boolean delivered = deliver(deadline);
        for (long pause = 50; !delivered && lastStatus == 503; pause = Math.min(pause * 2, 1000)) {
            if (deadline - System.currentTimeMillis() <= pause) break;
            LockSupport.parkNanos(this, pause * 1_000_000L);
            delivered = deliver(deadline);
        }
        // An outage ends with one line, as when delivery resumes: here, what stayed undelivered (a JVM that
        // said it was retrying is not any more).
        if (!delivered) {
            String why = lastStatus == 0 ? "unreachable" : "HTTP " + lastStatus;
            AgentLog.line("could not deliver to " + options.eventsUrl() + " (" + why + "): " + outbox.size()
                    + " batch(es) undelivered at exit" + (outbox.dropped() > 0 ? ", " + outbox.dropped() + " dropped" : ""));
        }
    }

    /** Sends the outbox in order until it is empty (true) or a request fails (false). */
    private boolean deliver(long deadline) {
        boolean retriedWithStart = false;
        while (true) {
            byte[] batch = outbox.peek();
            if (batch == null && startAccepted) return true;
            long now = System.currentTimeMillis();
            if (now >= deadline) return false;
            boolean withStart = !startAccepted;
            GatewayClient.Result result = client.post(withStart ? startEvent : null, batch, (int) Math.min(REQUEST_TIMEOUT_MS, deadline - now));
            lastStatus = result.status;
            now = System.currentTimeMillis();
            switch (result.outcome) {
                case ACCEPTED:
                    startAccepted = true;
                    if (batch != null) outbox.removeFirst();
                    lastDelivery = now;
                    recovered();
                    retriedWithStart = false;
                    break;
                case REJECTED:
                    if (!withStart && !retriedWithStart) {
                        // The service may have lost this VM (a new data directory): introduce it again, once,
                        // with everything it was told once per VM life (the components).
                        startAccepted = false;
                        retriedWithStart = true;
                        reintroduce.run();
                        break;
                    }
                    rejected(result, batch != null);
                    if (withStart) {
                        // The vm.start event itself may be what the service refuses: do not hammer it.
                        failed(now, result);
                        return false;
                    }
                    break;
                default:
                    failed(now, result);
                    return false;
            }
        }
    }

    private void rejected(GatewayClient.Result result, boolean dropBatch) {
        rejectedBatches++;
        if (dropBatch) outbox.removeFirst();
        AgentLog.line("gateway rejected a batch (HTTP " + result.status + "), " + rejectedBatches + " so far: " + result.message);
    }

    private void failed(long now, GatewayClient.Result result) {
        if (failingSince < 0) {
            failingSince = now;
            droppedBeforeOutage = outbox.dropped();
        }
        backoffMs = backoffMs == 0 ? options.flushMs : Math.min(backoffMs * 2, Math.max(MAX_BACKOFF_MS, options.flushMs));
        // Jitter: agents that lost the same gateway do not all come back in the same instant.
        nextAttempt = now + (long) (backoffMs * ThreadLocalRandom.current().nextDouble(0.8, 1.2));
        boolean transient503 = result.status == 503 && now - failingSince < QUIET_503_MS;
        boolean lasting = now - failingSince >= OUTAGE_LOG_MS || result.status == 401 || result.status == 403;
        if (!outageLogged && lasting && !transient503 && result.outcome != GatewayClient.Outcome.REJECTED) {
            outageLogged = true;
            String why = result.status == 0 ? result.message
                    : "HTTP " + result.status + (result.message.isEmpty() ? "" : " " + result.message);
            if (result.status == 401 || result.status == 403) why += " (check apiKeyFile / JVMLENS_AGENT_API_KEY)";
            AgentLog.line("cannot deliver to " + options.eventsUrl() + ": " + why + "; retrying every few seconds, keeping"
                    + " components and at most " + options.maxBatches + " batches of code, the oldest dropped first");
        }
    }

    private void recovered() {
        if (failingSince < 0) return;
        long dropped = outbox.dropped() - droppedBeforeOutage;
        if (outageLogged || dropped > 0) {
            AgentLog.line("delivering again to " + options.eventsUrl() + "; dropped " + dropped + " batch(es) meanwhile");
        }
        failingSince = -1;
        outageLogged = false;
        backoffMs = 0;
        nextAttempt = 0;
    }
}
