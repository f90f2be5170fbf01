/**
 * The connection to one authentik: its API clients, its errors as IdpErrors, and its answers checked against the
 * shapes Gatehouse reads. Reads use the `...Raw()` calls and read the JSON themselves: the client's generated models
 * throw on fields that an older server does not send (the reference's §9.1), while request bodies are safe either way.
 */
import { createRequire } from 'node:module';

import type * as AuthentikApi from '@goauthentik/api';
import type {
    AdminApi,
    ApiResponse,
    CoreApi,
    CryptoApi,
    FlowsApi,
    OutpostsApi,
    PoliciesApi,
    PropertymappingsApi,
    ProvidersApi,
} from '@goauthentik/api';
import Joi from 'joi';

import { type IdpCredentials, IdpError } from '../../idp-types.ts';

/**
 * The generated client, loaded when a connection is first made rather than with the kind: it is about 45 MB of
 * memory and most of a second of the server's start, which a server not talking to authentik need not pay. Only
 * types may be imported from it anywhere else.
 */
let api: typeof AuthentikApi | undefined;
export function authentikApi(): typeof AuthentikApi {
    api ??= createRequire(import.meta.url)('@goauthentik/api') as typeof AuthentikApi;
    return api;
}

export const PAGE_SIZE = 100;

export type Json = Record<string, unknown>;

interface Page {
    pagination: { next: number };
    results: Json[];
}

// The shapes of the answers Gatehouse reads, as authentik's schema gives them (unknown fields allowed): an answer that
// does not fit did not come from a working authentik.
const anyObject = Joi.object().unknown();
export const named = (fields: Record<string, Joi.Schema>) => Joi.object(fields).unknown();
export const key = Joi.string().required();
export const words = Joi.string().allow('').required();
const PAGE = named({
    pagination: named({ next: Joi.number().integer().min(0).required() }).required(),
    results: Joi.array().required(),
});

function baseUrlOf(url: string): string {
    return `${url.replace(/\/+$/, '')}/api/v3`;
}

async function describeResponse(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The client's errors, as the reasons a person can act on. */
export async function asIdpError(error: unknown, url: string, what: string): Promise<IdpError> {
    if (error instanceof IdpError) {
        return error;
    }

    if (error instanceof authentikApi().FetchError || (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
        const cause = (error as AuthentikApi.FetchError).cause as (Error & { cause?: { code?: string } }) | undefined;
        const detail = cause?.cause?.code ?? cause?.message ?? (error as Error).message;
        return new IdpError('unreachable', `authentik at ${url} could not be reached (${detail})`);
    }

    if (error instanceof authentikApi().ResponseError) {
        const status = error.response.status;
        const body = await describeResponse(error.response);
        if (status === 403 || status === 401) {
            return new IdpError('refused', `authentik refused the token (${status}) while ${what}`);
        }

        if (status === 404) {
            return new IdpError('not-found', `authentik answered 404 while ${what}${body ? `: ${body}` : ''}`);
        }

        return new IdpError('rejected', `authentik answered ${status} while ${what}${body ? `: ${body}` : ''}`);
    }

    return new IdpError('rejected', `authentik: ${(error as Error).message} while ${what}`);
}

export async function json<T = Json>(call: Promise<ApiResponse<unknown>>): Promise<T> {
    const response = await call;
    return (await response.raw.json()) as T;
}

/** `body` when it fits `schema`; otherwise a not-a-provider error naming the provider and what did not fit. */
export function fitting<T>(body: unknown, schema: Joi.Schema, url: string, what: string): T {
    const { error } = schema.validate(body);
    if (error) {
        throw new IdpError(
            'not-a-provider',
            `authentik at ${url} answered ${what} with something that does not fit authentik's schema (${error.message})`,
        );
    }

    return body as T;
}

export const text = (value: unknown): string =>
    typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);

export class AuthentikClient {
    readonly url: string;
    readonly core: CoreApi;
    readonly admin: AdminApi;
    readonly flows: FlowsApi;
    readonly outposts: OutpostsApi;
    readonly crypto: CryptoApi;
    readonly providers: ProvidersApi;
    readonly policies: PoliciesApi;
    readonly mappings: PropertymappingsApi;

    constructor(credentials: IdpCredentials, timeoutMs: number) {
        this.url = credentials.url;
        const { AdminApi, Configuration, CoreApi, CryptoApi, FlowsApi, OutpostsApi, PoliciesApi, PropertymappingsApi, ProvidersApi } =
            authentikApi();
        const configuration = new Configuration({
            basePath: baseUrlOf(credentials.url),
            accessToken: credentials.token,
            fetchApi: (input, init) => fetch(input, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) }),
        });
        this.core = new CoreApi(configuration);
        this.admin = new AdminApi(configuration);
        this.flows = new FlowsApi(configuration);
        this.outposts = new OutpostsApi(configuration);
        this.crypto = new CryptoApi(configuration);
        this.providers = new ProvidersApi(configuration);
        this.policies = new PoliciesApi(configuration);
        this.mappings = new PropertymappingsApi(configuration);
    }

    /** `work`, its errors as IdpErrors saying it failed while `what`. */
    async call<T>(what: string, work: () => Promise<T>): Promise<T> {
        try {
            return await work();
        } catch (error) {
            throw await asIdpError(error, this.url, what);
        }
    }

    async read<T>(call: Promise<ApiResponse<unknown>>, schema: Joi.Schema, what: string): Promise<T> {
        return fitting<T>(await json<unknown>(call), schema, this.url, what);
    }

    /** Every page of a list, each item fitting `item`. */
    async all(fetchPage: (page: number) => Promise<ApiResponse<unknown>>, item: Joi.Schema = anyObject): Promise<Json[]> {
        const results: Json[] = [];
        const pageSchema = PAGE.keys({ results: Joi.array().items(item).required() });
        for (let page = 1; page > 0 && page < 1000;) {
            const body = await this.read<Page>(fetchPage(page), pageSchema, 'a list');
            results.push(...body.results);
            page = Number(body.pagination?.next ?? 0);
        }

        return results;
    }
}
