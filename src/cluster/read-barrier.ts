// Read your writes: before a read, a node asks the log's last sequence and applies up to it. A question already
// sent may have been answered before a read's write, so a read waits for one sent after it arrived; the reads
// arriving in one turn of the event loop share one. With one question in flight at a time, a read arriving
// in the turn that sent it, or while it was on its way, waited for it and then for the next one. A few in
// flight let such a read have its own at once, each costing the servers one more answer.
import { setImmediate as nextTurn } from 'node:timers';

export class LastSeqQuestions {
  readonly #ask: () => Promise<number>;
  readonly #maxInFlight: number;
  #inFlight = 0;
  /** The question the reads arriving now join, not sent yet, and what sends it. */
  #next: { answer: Promise<number>; send: () => void } | null = null;

  constructor(ask: () => Promise<number>, maxInFlight: number) {
    this.#ask = ask;
    this.#maxInFlight = maxInFlight;
  }

  /** The log's last sequence as a question sent after this call learns it. */
  afterNow(): Promise<number> {
    if (this.#next !== null) return this.#next.answer;
    let send!: () => void;
    const answer = new Promise<number>((resolve, reject) => {
      send = () => {
        // The reads arriving from now on need a later question.
        this.#next = null;
        this.#inFlight++;
        this.#ask().then(resolve, reject).finally(() => {
          this.#inFlight--;
          this.#sendNext();
        });
      };
    });
    this.#next = { answer, send };
    // At the turn's end, so that the reads arriving in it join; with as many in flight as allowed, when one is answered.
    if (this.#inFlight < this.#maxInFlight) nextTurn(() => this.#sendNext());
    return answer;
  }

  #sendNext(): void {
    if (this.#next !== null && this.#inFlight < this.#maxInFlight) this.#next.send();
  }
}
