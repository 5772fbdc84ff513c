package io.jvmlens.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;

/**
 * POSTs one batch to {gateway}/agent/v1/events (decisions §4) and classifies the answer.
 * HttpURLConnection rather than java.net.http: it lives in java.base, so the agent loads no extra
 * module into the application, and it keeps connections alive between batches.
 */
final class GatewayClient {
    enum Outcome {
        /** 2xx: the batch is durably stored. */
        ACCEPTED,
        /** 400, 413, 415: the batch itself is wrong; sending it again cannot help. */
        REJECTED,
        /** Network error, 401/403, 429, 5xx: the batch is fine; try again later. */
        FAILED
    }

    static final class Result {
        final Outcome outcome;
        final int status;
        final String message;

        Result(Outcome outcome, int status, String message) {
            this.outcome = outcome;
            this.status = status;
            this.message = message;
        }
    }

    private static final int MAX_RESPONSE_CHARS = 2000;

    private final URL eventsUrl;
    private final String apiKey;
    private final String userAgent;

    GatewayClient(String eventsUrl, String apiKey, String agentVersion) throws IOException {
        this.eventsUrl = URI.create(eventsUrl).toURL();
        this.apiKey = apiKey;
        this.userAgent = "jvmlens-agent/" + agentVersion;
    }

    /** POSTs `[first,second]`, either of them left out when null (each is events, comma-separated). */
    Result post(byte[] first, byte[] second, int timeoutMs) {
        HttpURLConnection connection = null;
        try {
            int length = 2 + (first == null ? 0 : first.length) + (second == null ? 0 : second.length) + (first != null && second != null ? 1 : 0);
            connection = (HttpURLConnection) eventsUrl.openConnection();
            connection.setRequestMethod("POST");
            connection.setDoOutput(true);
            connection.setUseCaches(false);
            connection.setInstanceFollowRedirects(false);
            connection.setConnectTimeout(Math.max(1, timeoutMs));
            connection.setReadTimeout(Math.max(1, timeoutMs));
            connection.setFixedLengthStreamingMode(length);
            connection.setRequestProperty("Content-Type", "application/json");
            connection.setRequestProperty("Accept", "application/json");
            connection.setRequestProperty("User-Agent", userAgent);
            if (apiKey != null) connection.setRequestProperty("x-api-key", apiKey);
            try (OutputStream out = connection.getOutputStream()) {
                out.write('[');
                if (first != null) out.write(first);
                if (first != null && second != null) out.write(',');
                if (second != null) out.write(second);
                out.write(']');
            }
            int status = connection.getResponseCode();
            String response = readFully(status < 400 ? connection.getInputStream() : connection.getErrorStream());
            if (status >= 200 && status < 300) return new Result(Outcome.ACCEPTED, status, response);
            if (status == 400 || status == 413 || status == 415) return new Result(Outcome.REJECTED, status, response);
            return new Result(Outcome.FAILED, status, response);
        } catch (IOException | RuntimeException e) {
            if (connection != null) connection.disconnect();
            return new Result(Outcome.FAILED, 0, e.toString());
        }
    }

    /** Reads the whole response so the connection can be reused; keeps only the start of it. */
    private static String readFully(InputStream in) throws IOException {
        if (in == null) return "";
        try (InputStream stream = in) {
            ByteArrayOutputStream kept = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            for (int n = stream.read(buffer); n >= 0; n = stream.read(buffer)) {
                int room = MAX_RESPONSE_CHARS - kept.size();
                if (room > 0) kept.write(buffer, 0, Math.min(room, n));
            }
            return kept.toString(StandardCharsets.UTF_8);
        }
    }
}
