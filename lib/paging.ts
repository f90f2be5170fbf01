import type { Request, ResponseObject } from '@hapi/hapi';

export const DEFAULT_PAGE_SIZE = 30;
export const MAX_PAGE_SIZE = 50;

export interface Paging {
    page: number;
    limit: number;
    offset: number;
}

/** One page of a list as the API shows it, with how many items match in all. */
export interface Page<T> {
    items: T[];
    total: number;
}

/** Gitea's rules: page below 1 or not a number is 1; limit missing, below 1 or not a number is 30; above 50 is 50. */
export function parsePaging(query: Record<string, unknown>): Paging {
    const page = Math.max(1, toInteger(query.page) ?? 1);
    let limit = toInteger(query.limit) ?? DEFAULT_PAGE_SIZE;
    if (limit <= 0) {
        limit = DEFAULT_PAGE_SIZE;
    }

    limit = Math.min(limit, MAX_PAGE_SIZE);
    return { page, limit, offset: (page - 1) * limit };
}

function toInteger(value: unknown): number | undefined {
    if (typeof value === 'number' && Number.isInteger(value)) {
        return value;
    }

    if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) {
        return Number.parseInt(value, 10);
    }

    return undefined;
}

export interface PagingHeaderOptions {
    total: number;
    paging: Paging;
    /** Gitea leaves Link off some lists (cron, unadopted, badges). */
    link?: boolean;
}

/** Sets X-Total-Count and, where relations apply, Gitea's Link header (next, last, first, prev). */
export function setPagingHeaders(
    request: Request,
    response: ResponseObject,
    publicUrl: string,
    { total, paging, link = true }: PagingHeaderOptions,
): ResponseObject {
    response.header('X-Total-Count', String(total));
    const exposed = ['X-Total-Count'];
    if (link) {
        const value = linkHeader(request, publicUrl, total, paging);
        if (value) {
            response.header('Link', value);
            exposed.push('Link');
        }
    }

    response.header('Access-Control-Expose-Headers', exposed.join(', '));
    return response;
}

function linkHeader(request: Request, publicUrl: string, total: number, paging: Paging): string | undefined {
    const lastPage = Math.max(1, Math.ceil(total / paging.limit));
    const current = Math.min(paging.page, lastPage);
    const relations: string[] = [];
    const pageUrl = (page: number) => {
        const params = new URLSearchParams(request.url.searchParams);
        params.set('page', String(page));
        params.sort();
        return `<${publicUrl}${request.path.replace(/^\//, '')}?${params.toString()}>`;
    };

    if (current * paging.limit < total) {
        relations.push(`${pageUrl(current + 1)}; rel="next"`);
    }

    if (current < lastPage) {
        relations.push(`${pageUrl(lastPage)}; rel="last"`);
    }

    if (current > 1) {
        relations.push(`${pageUrl(1)}; rel="first"`, `${pageUrl(current - 1)}; rel="prev"`);
    }

    return relations.length > 0 ? relations.join(',') : undefined;
}
