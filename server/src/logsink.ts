// Where the server's log lines go: a file descriptor (stdout by default) written asynchronously. A
// log must never block or crash serving: a line that cannot be written (a full disk, a closed pipe)
// is dropped and counted, never retried in a loop; lines queue up to a cap while a write is under
// way, and past it are dropped too. /health/ reports the count.
import fs from 'node:fs';

export class LogSink {
  private queue: string[] = [];
  private queuedBytes = 0;
  private writing = false;
  /** Lines lost to write errors or a full queue since start. */
  dropped = 0;
  /** The last write error's code (e.g. ENOSPC), until a write succeeds again. */
  lastError: string | null = null;

  constructor(
    private readonly fd: number = 1,
    private readonly maxQueuedBytes = 4 * 1024 * 1024,
  ) {}

  /** pino's destination interface. Never throws. */
  write(line: string): boolean {
    if (this.queuedBytes + line.length > this.maxQueuedBytes) {
      this.dropped += 1;
      return true;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    if (!this.writing) this.next();
    return true;
  }

  private next(): void {
    if (this.queue.length === 0) {
      this.writing = false;
      return;
    }
    this.writing = true;
    const lines = this.queue.length;
    const chunk = Buffer.from(this.queue.join(''));
    this.queue = [];
    this.queuedBytes = 0;
    this.send(chunk, 0, lines);
  }

  private send(chunk: Buffer, offset: number, lines: number): void {
    fs.write(this.fd, chunk, offset, chunk.length - offset, null, (err, written) => {
      if (err) {
        if (err.code === 'EAGAIN') {
          // A full pipe: try again a little later, without holding the event loop.
          setTimeout(() => this.send(chunk, offset, lines), 50).unref();
          return;
        }
        this.dropped += lines;
        this.lastError = err.code ?? err.message;
        this.next();
        return;
      }
      this.lastError = null;
      if (offset + written < chunk.length) this.send(chunk, offset + written, lines);
      else this.next();
    });
  }

  /** Best effort at exit: what is still queued, written synchronously; errors are ignored. */
  flushSync(): void {
    try {
      if (this.queue.length > 0) fs.writeSync(this.fd, this.queue.join(''));
    } catch {
      // Nothing more can be done for a log at exit.
    }
    this.queue = [];
    this.queuedBytes = 0;
  }
}
