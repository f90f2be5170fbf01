/** authentik's list answers: DRF page-number pagination with its own `pagination` object, plus search and ordering. */
import { ApiError } from './errors.ts';
import type { Json } from './http.ts';

const DEFAULT_PAGE_SIZE = 100;

/** Keeps the items whose fields contain the search term (case-insensitive), as DRF's SearchFilter. */
export function searched<T>(items: T[], term: unknown, fields: (item: T) => Array<string | null | undefined>): T[] {
    if (typeof term !== 'string' || term.trim() === '') {
        return items;
    }

    const words = term.toLowerCase().split(/\s+/).filter(Boolean);
    return items.filter((item) => {
        const haystack = fields(item)
            .map((value) => (value ?? '').toLowerCase())
            .join('\n');
        return words.every((word) => haystack.includes(word));
    });
}

function compare(a: unknown, b: unknown): number {
    if (typeof a === 'number' && typeof b === 'number') {
        return a - b;
    }

    return String(a ?? '').localeCompare(String(b ?? ''));
}

/** DRF's OrderingFilter over shown objects: `name`, `-name`, several comma-separated; unknown fields are ignored. */
export function ordered(results: Json[], ordering: unknown, fallback: string): Json[] {
    const fields = (typeof ordering === 'string' && ordering !== '' ? ordering : fallback).split(',').map((field) => field.trim());
    const known = fields.filter((field) => results.length === 0 || field.replace(/^-/, '') in (results[0] ?? {}));
    return [...results].sort((a, b) => {
        for (const field of known) {
            const descending = field.startsWith('-');
            const name = field.replace(/^-/, '');
            const order = compare(a[name], b[name]);
            if (order !== 0) {
                return descending ? -order : order;
            }
        }

        return 0;
    });
}

/** One page of `results`, as `Paginated<X>List`: 404 "Invalid page." past the last page, as DRF. */
export function paginated(results: Json[], query: Record<string, unknown>, ordering = 'pk'): Json {
    const size = typeof query.page_size === 'number' && query.page_size > 0 ? query.page_size : DEFAULT_PAGE_SIZE;
    const current = typeof query.page === 'number' ? query.page : 1;
    const totalPages = Math.max(1, Math.ceil(results.length / size));
    if (current < 1 || current > totalPages) {
        throw new ApiError(404, { detail: 'Invalid page.' });
    }

    const sorted = ordered(results, query.ordering, ordering);
    const start = (current - 1) * size;
    const pageResults = sorted.slice(start, start + size);
    return {
        pagination: {
            next: current < totalPages ? current + 1 : 0,
            previous: current > 1 ? current - 1 : 0,
            count: results.length,
            current,
            total_pages: totalPages,
            start_index: pageResults.length === 0 ? 0 : start + 1,
            end_index: start + pageResults.length,
        },
        results: pageResults,
        autocomplete: {},
    };
}
