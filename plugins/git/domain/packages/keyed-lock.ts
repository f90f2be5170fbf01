/** Runs work one at a time per key; work under different keys runs side by side. */
export class KeyedLock {
    readonly #tails = new Map<string, Promise<void>>();

    async run<T>(key: string, work: () => Promise<T>): Promise<T> {
        const result = (this.#tails.get(key) ?? Promise.resolve()).then(work);
        const tail = result.then(
            () => undefined,
            () => undefined,
        );
        this.#tails.set(key, tail);
        void tail.then(() => {
            if (this.#tails.get(key) === tail) {
                this.#tails.delete(key);
            }
        });
        return await result;
    }
}
