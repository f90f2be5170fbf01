/**
 * An in-memory cache bounded by a total weight (entries, or bytes), least recently used first out, with an
 * optional time to live per entry. Loads of one key run once however many callers wait for them.
 */
export interface BoundedCacheOptions {
    /** The most the entries may weigh together; an entry heavier than this is not kept. */
    maxWeight: number;
    /** How long entries live by default, in milliseconds; unset: until pushed out. */
    ttlMs?: number;
    now?: () => number;
}

interface Entry<V> {
    value: V;
    weight: number;
    expiresAt: number;
}

export class BoundedCache<V> {
    readonly #entries = new Map<string, Entry<V>>();
    readonly #loading = new Map<string, Promise<V>>();
    readonly #options: BoundedCacheOptions;
    readonly #now: () => number;
    #weight = 0;

    constructor(options: BoundedCacheOptions) {
        this.#options = options;
        this.#now = options.now ?? Date.now;
    }

    get size(): number {
        return this.#entries.size;
    }

    get weight(): number {
        return this.#weight;
    }

    get(key: string): V | undefined {
        const entry = this.#entries.get(key);
        if (!entry) {
            return undefined;
        }

        if (entry.expiresAt <= this.#now()) {
            this.delete(key);
            return undefined;
        }

        // Map keeps insertion order: moving the entry to the end makes the first one the least recently used.
        this.#entries.delete(key);
        this.#entries.set(key, entry);
        return entry.value;
    }

    set(key: string, value: V, { weight = 1, ttlMs = this.#options.ttlMs }: { weight?: number; ttlMs?: number } = {}): void {
        this.delete(key);
        if (weight > this.#options.maxWeight) {
            return;
        }

        this.#entries.set(key, { value, weight, expiresAt: ttlMs === undefined ? Infinity : this.#now() + ttlMs });
        this.#weight += weight;
        for (const [oldest, entry] of this.#entries) {
            if (this.#weight <= this.#options.maxWeight) {
                break;
            }

            this.#entries.delete(oldest);
            this.#weight -= entry.weight;
        }
    }

    delete(key: string): void {
        const entry = this.#entries.get(key);
        if (entry) {
            this.#entries.delete(key);
            this.#weight -= entry.weight;
        }
    }

    clear(): void {
        this.#entries.clear();
        this.#weight = 0;
    }

    /** The cached value, or `load`'s, kept unless it throws; callers asking meanwhile share the one load. */
    async load(key: string, load: () => Promise<V>, weightOf: (value: V) => number = () => 1): Promise<V> {
        const cached = this.get(key);
        if (cached !== undefined) {
            return cached;
        }

        const pending = this.#loading.get(key);
        if (pending) {
            return await pending;
        }

        const loading = load().then((value) => {
            this.set(key, value, { weight: weightOf(value) });
            return value;
        });
        this.#loading.set(key, loading);
        try {
            return await loading;
        } finally {
            this.#loading.delete(key);
        }
    }
}
