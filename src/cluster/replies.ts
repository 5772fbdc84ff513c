// Answering a request from a NATS subscription's callback: a reply on a connection that is closing throws,
// and a throw from a callback would end the process; and how large a reply the servers take.
import type { Msg, NatsConnection } from '@nats-io/transport-node';

/** Room left in a reply for the protocol's own bytes. */
const REPLY_SLACK = 4096;

/** The largest reply the servers take (NATS's default max_payload, 1 MiB, before the connection knows). */
export function replyLimit(nc: NatsConnection): number {
  return (nc.info?.max_payload ?? 1024 * 1024) - REPLY_SLACK;
}

/** Sends the reply; false when it could not be sent (the request has no reply subject, or the connection is closing). */
export function respond(message: Msg, data: Uint8Array | string): boolean {
  try {
    return message.respond(data);
  } catch {
    return false;
  }
}
