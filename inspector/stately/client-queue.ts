/**
 * A relay client's queue: first in, first out, bounded by dropping the oldest message that may be
 * dropped (a snapshot or an event; never an actor). A client that cannot keep up keeps its queue
 * full, so every publish then drops one: taking from the front and dropping must cost O(1), not a
 * shift of the whole array (Array#shift and #splice at the front move every element).
 */
export interface Queued {
  droppable: boolean;
}

export class ClientQueue<T extends Queued> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Compact once the taken part is most of the array (amortised O(1)).
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Drop the oldest droppable message; false when every queued one must be kept. */
  dropOldest(): boolean {
    for (let i = this.head; i < this.items.length; i++) {
      if (!this.items[i]!.droppable) continue;
      if (i === this.head) this.shift();
      else this.items.splice(i, 1); // only behind actor messages at the front: rare
      return true;
    }
    return false;
  }
}
