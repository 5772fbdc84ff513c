// Answering a request from a NATS subscription's callback: a reply on a connection that is closing throws,
// and a throw from a callback would end the process.
import type { Msg } from '@nats-io/transport-node';

/** Sends the reply; false when it could not be sent (the request has no reply subject, or the connection is closing). */
export function respond(message: Msg, data: Uint8Array | string): boolean {
  try {
    return message.respond(data);
  } catch {
    return false;
  }
}
