/**
 * Guards llama.cpp's set of a model's LoRA adapters (`llama_model::loras`, a `std::set` with no
 * lock of its own). Loading an adapter inserts into it and freeing one erases from it, each on a
 * thread of libuv's pool; a context's graph reserve (at its creation, and in the first decode
 * after its adapters change) walks it on another, to count every adapter's graph nodes. Walked
 * while another thread rebalances it or frees an entry, it reads freed memory.
 *
 * So reserves are readers, several at once, and loads and frees are writers, alone. Waiting
 * work goes in arrival order: a reader that comes while a writer waits goes after it.
 */
export class LoraSetGuard {
  private readers = 0;
  private writer = false;
  private readonly waiting: { write: boolean; go: () => void }[] = [];

  /** Runs `work` (a context's creation, or a decode that reserves) while no adapter is loaded or freed. */
  async reading<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire(false);
    try {
      return await work();
    } finally {
      this.readers--;
      this.pump();
    }
  }

  /** Runs `work` (an adapter's load or free) alone. */
  async writing<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire(true);
    try {
      return await work();
    } finally {
      this.writer = false;
      this.pump();
    }
  }

  private acquire(write: boolean): Promise<void> {
    if (this.waiting.length === 0 && this.free(write)) {
      this.take(write);
      return Promise.resolve();
    }
    return new Promise((go) => this.waiting.push({ write, go }));
  }

  private free(write: boolean): boolean {
    return write ? !this.writer && this.readers === 0 : !this.writer;
  }

  private take(write: boolean): void {
    if (write) this.writer = true;
    else this.readers++;
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.free(this.waiting[0]!.write)) {
      const next = this.waiting.shift()!;
      this.take(next.write);
      next.go();
      if (next.write) return;
    }
  }
}
