/**
 * Failures a test asks for: "fail the Nth /api/v3 request matching METHOD and a path pattern with status S". The
 * chosen request is answered before its operation runs, so it changes nothing, as a server that refuses it.
 */
import type { Reply } from './http.ts';

export interface FailureRule {
    /** The request methods the rule counts (any when left out): `'PATCH'`, or `['POST', 'PATCH', 'PUT', 'DELETE']`. */
    method?: string | string[];
    /** Matched against the path below /api/v3 without its query (any when left out): `/^\/outposts\/instances\//`. */
    path?: RegExp;
    /** Which matching request fails, counted from when the rule was added; 1 unless told. */
    nth?: number;
    /** The status the chosen request is answered with; 500 unless told. */
    status?: number;
}

interface PendingRule {
    methods: string[] | null;
    path: RegExp | null;
    remaining: number;
    status: number;
}

export class FailureRules {
    readonly #pending: PendingRule[] = [];

    add(rule: FailureRule): void {
        const nth = rule.nth ?? 1;
        if (!Number.isInteger(nth) || nth < 1) {
            throw new Error(`a failure rule's nth is a whole number from 1, not ${nth}`);
        }

        const methods = rule.method === undefined ? null : [rule.method].flat().map((method) => method.toUpperCase());
        this.#pending.push({ methods, path: rule.path ?? null, remaining: nth, status: rule.status ?? 500 });
    }

    /** Rules not yet used up. */
    get pending(): number {
        return this.#pending.length;
    }

    clear(): void {
        this.#pending.length = 0;
    }

    /** Counts the request against every rule it matches; answers the failure when one of them has reached its Nth. */
    failure(method: string, path: string): Reply | undefined {
        let chosen: PendingRule | undefined;
        for (const rule of [...this.#pending]) {
            if ((rule.methods && !rule.methods.includes(method.toUpperCase())) || (rule.path && !rule.path.test(path))) {
                continue;
            }

            rule.remaining -= 1;
            if (rule.remaining === 0) {
                this.#pending.splice(this.#pending.indexOf(rule), 1);
                chosen ??= rule;
            }
        }

        return chosen && { status: chosen.status, body: { detail: `the test made the stand-in fail this request (${method} ${path})` } };
    }
}
