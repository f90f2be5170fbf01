/**
 * "How a method is chosen": the evidence about an image, best first. Tested (a recipe checked with a real login, or
 * saved from a working app), documented (a documented recipe, the curated list, authentik's integration guides),
 * found (the image's own variables, labels and documentation, when the image has been inspected). One item per
 * method at its best level, with every source that speaks for it; methods only in a paid edition are flagged and
 * never recommended; LDAP is information only.
 */
import type { Server } from '@hapi/hapi';

import { NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { hub } from '../hub/hub-service.ts';
import { UpstreamFailure } from '../hub/upstream.ts';
import { recipes } from '../recipes/recipe-service.ts';
import { type RecipeMatch } from '../recipes/image-match.ts';
import type { Recipe } from '../recipes/recipe-types.ts';
import { scanImageDocs } from './doc-scan.ts';
import { type CuratedApp, curatedFor, GUIDE_PROVIDER_METHODS, guideFor } from './documented.ts';
import { Service } from '../../../../lib/service.ts';

export const EVIDENCE_LEVELS = ['tested', 'documented', 'found'] as const;
export type EvidenceLevel = (typeof EVIDENCE_LEVELS)[number];
/** The order methods are offered in at one level: single sign-on first, the shared account last. */
export const METHOD_ORDER = ['oidc', 'saml', 'header', 'none', 'basic', 'autologin', 'own', 'ldap'] as const;

export interface EvidenceSource {
    what: string;
    url?: string;
}

export interface Evidence {
    method: string;
    level: EvidenceLevel;
    sources: EvidenceSource[];
    flags: {
        /** Only in a paid edition: shown, never recommended. */
        paidOnly: boolean;
        /** Information only (LDAP). */
        informationOnly: boolean;
        /** A source says it could not confirm the fact. */
        unverified: boolean;
        /** The recipe that sets it up, when there is one. */
        recipe?: string;
    };
}

/** What the image's own documentation says, from an inspection (see the hub routes), when there is one. */
export interface FoundInDocs {
    method: string;
    what: string;
    text: string;
}

/** Whether the image's registry was asked for its configuration (variables and labels, for "found in docs"). */
export interface Inspection {
    ok: boolean;
    digest?: string;
    /** Requests sent to the registry for this answer (0 when Gatehouse had it already). */
    roundTrips?: number;
    error?: string;
}

export interface Detection {
    image: string;
    recipe: { id: string; title: string; level: string; method: string; match: RecipeMatch['how'] } | null;
    app: string | null;
    evidence: Evidence[];
}

interface Claim {
    method: string;
    level: EvidenceLevel;
    source: EvidenceSource;
    /** true: the source says paid edition only; false: it says the free edition has it; absent: it says nothing. */
    paid?: boolean;
    unverified?: boolean;
    recipe?: string;
}

function recipeClaims(recipe: Recipe): Claim[] {
    const level: EvidenceLevel = recipe.level === 'tested' || recipe.origin.kind === 'saved' ? 'tested' : 'documented';
    const what =
        recipe.origin.kind === 'saved' ? `recipe saved from the app ${recipe.origin.app}` : `recipe ${recipe.id} (${recipe.level})`;
    const own: Claim = {
        method: recipe.method,
        level,
        source: { what, ...(recipe.sources[0] ? { url: recipe.sources[0] } : {}) },
        recipe: recipe.id,
    };
    const paid = (recipe.paidOnly ?? []).map((method): Claim => ({
        method,
        level: 'documented',
        source: { what: `recipe ${recipe.id}: paid edition only` },
        paid: true,
    }));
    return [own, ...paid];
}

function curatedClaims(app: CuratedApp): Claim[] {
    const claims = Object.entries(app.methods).map(([method, facts]): Claim => ({
        method,
        level: 'documented',
        source: { what: `curated list: ${app.app}`, ...(facts.sources?.[0] ? { url: facts.sources[0] } : {}) },
        ...(typeof facts.paid === 'boolean' ? { paid: facts.paid } : {}),
        unverified: facts.unverified === true || facts.unverified === 'true',
    }));
    const ldap: Claim[] = app.ldap ? [{ method: 'ldap', level: 'documented', source: { what: `curated list: ${app.app} (LDAP)` } }] : [];
    return [...claims, ...ldap];
}

function guideClaims(image: string, slugs: string[]): Claim[] {
    const guide = guideFor(image, slugs);
    if (!guide) {
        return [];
    }

    return guide.providers
        .map((provider) => GUIDE_PROVIDER_METHODS[provider])
        .filter((method): method is string => method !== undefined)
        .map((method) => ({
            method,
            level: 'documented' as const,
            source: { what: `authentik integration guide: ${guide.app}`, url: guide.docs_url },
        }));
}

function foundClaims(found: FoundInDocs[]): Claim[] {
    return found.map((finding) => ({
        method: finding.method,
        level: 'found' as const,
        source: { what: `image ${finding.what}: ${finding.text}` },
    }));
}

/** The reason an upstream gave; anything else is a fault here and is thrown on. */
function upstreamReason(error: unknown): string {
    if (!(error instanceof UpstreamFailure) && !(error instanceof NotFoundError)) {
        throw error;
    }

    return error.message.slice(0, 300);
}

const rank = (list: readonly string[], value: string) => (list.includes(value) ? list.indexOf(value) : list.length);

/**
 * Paid-only when a source says so and none says the free edition has it; a source that says nothing about editions
 * (an integration guide, what the image's docs mention) leaves the mark as it is.
 */
function paidOnly(claims: Claim[]): boolean {
    return claims.some((claim) => claim.paid === true) && !claims.some((claim) => claim.paid === false);
}

/** One item per method, at the best level any claim gives it, with all their sources; best first. */
export function mergeClaims(claims: Claim[]): Evidence[] {
    const byMethod = new Map<string, Claim[]>();
    for (const claim of claims) {
        byMethod.set(claim.method, [...(byMethod.get(claim.method) ?? []), claim]);
    }

    const merged = [...byMethod.entries()].map(([method, said]): Evidence => {
        const recipe = said.find((claim) => claim.recipe)?.recipe;
        return {
            method,
            level: said.map((claim) => claim.level).sort((a, b) => rank(EVIDENCE_LEVELS, a) - rank(EVIDENCE_LEVELS, b))[0] ?? 'found',
            sources: said.map((claim) => claim.source),
            flags: {
                paidOnly: paidOnly(said),
                informationOnly: method === 'ldap',
                // A confirmed source outweighs an unverified one.
                unverified: said.every((claim) => claim.unverified === true),
                ...(recipe ? { recipe } : {}),
            },
        };
    });
    return merged.sort(
        (a, b) =>
            Number(a.flags.paidOnly || a.flags.informationOnly) - Number(b.flags.paidOnly || b.flags.informationOnly) ||
            rank(EVIDENCE_LEVELS, a.level) - rank(EVIDENCE_LEVELS, b.level) ||
            rank(METHOD_ORDER, a.method) - rank(METHOD_ORDER, b.method),
    );
}

const CACHE_ENTRIES = 1000;
const CACHE_MS = 5 * 60_000;
/** How long an image whose registry did not answer is not asked again. */
const FAILED_INSPECTION_MS = 60_000;
/** How long an inspected image's answer is kept whole. */
const INSPECTED_MS = 60_000;

export class EvidenceService extends Service {
    /** Detections by image and what was found, for as long as the recipes are the same (a save changes them). */
    readonly #cache = new Map<string, { at: number; version: object; detection: Detection }>();
    readonly #failedInspections = new Map<string, { at: number; error: string }>();
    readonly #inspected = new Map<string, { at: number; version: object; answer: Detection & { inspection: Inspection } }>();

    constructor(server: Server) {
        super(server);
    }

    /**
     * The evidence for an image, its registry asked first for what the image's own configuration says. The answer is
     * kept a minute (the registry's tags move, the recipes may be saved anew).
     */
    async inspectAndDetect(image: string): Promise<Detection & { inspection: Inspection }> {
        const version = await recipes(this.server).version();
        const kept = this.#inspected.get(image);
        if (kept && kept.version === version && Date.now() - kept.at < INSPECTED_MS) {
            return { ...kept.answer, inspection: { ...kept.answer.inspection, roundTrips: 0 } };
        }

        const { found, inspection } = await this.#inspect(image);
        const answer = { ...(await this.detect(image, found)), inspection };
        if (this.#inspected.size >= CACHE_ENTRIES) {
            this.#inspected.delete(this.#inspected.keys().next().value as string);
        }

        this.#inspected.set(image, { at: Date.now(), version, answer });
        return answer;
    }

    /**
     * What the image's own documentation says, for an app's options: the registry's answers are kept per digest (and a
     * tag's digest for a while) by the hub, a registry that did not answer is not asked again for a minute.
     */
    async foundInDocs(image: string): Promise<FoundInDocs[]> {
        try {
            return (await this.#inspect(image)).found;
        } catch (error) {
            // An image the registries cannot name or that is no container image has no documentation to read.
            if (error instanceof ValidationError) {
                return [];
            }

            throw error;
        }
    }

    /** What the image's own configuration (from its registry) and its Docker Hub page say; each part is optional. */
    async #inspect(image: string): Promise<{ found: FoundInDocs[]; inspection: Inspection }> {
        const [config, text] = await Promise.all([this.#configOf(image), this.#repositoryTextOf(image)]);
        const sourceReadme = await this.#sourceReadmeOf(config.docs?.labels ?? {});
        const found = scanImageDocs({ ...(config.docs ?? {}), ...(text ?? {}), ...(sourceReadme ? { sourceReadme } : {}) });
        return { found, inspection: config.inspection };
    }

    async #configOf(image: string): Promise<{ docs?: { env: string[]; labels: Record<string, string> }; inspection: Inspection }> {
        const failed = this.#failedInspections.get(image);
        if (failed && Date.now() - failed.at < FAILED_INSPECTION_MS) {
            return { inspection: { ok: false, error: failed.error } };
        }

        try {
            const inspected = await hub(this.server).inspect(image);
            const env = Object.entries(inspected.config.env).map(([name, value]) => `${name}=${value}`);
            return {
                docs: { env, labels: inspected.config.labels },
                inspection: { ok: true, digest: inspected.digest, roundTrips: inspected.roundTrips },
            };
        } catch (error) {
            const reason = upstreamReason(error);
            if (this.#failedInspections.size >= CACHE_ENTRIES) {
                this.#failedInspections.delete(this.#failedInspections.keys().next().value as string);
            }

            this.#failedInspections.set(image, { at: Date.now(), error: reason });
            return { inspection: { ok: false, error: reason } };
        }
    }

    /** The README of the source repository the image's labels name, when the forge answers (and may be asked). */
    async #sourceReadmeOf(labels: Record<string, string>): Promise<string | undefined> {
        try {
            return (await hub(this.server).sourceReadme(labels)) ?? undefined;
        } catch (error) {
            upstreamReason(error);
            return undefined;
        }
    }

    /** Docker Hub's description and README of the image's repository, when it is on Docker Hub and the page answers. */
    async #repositoryTextOf(image: string): Promise<{ description: string; readme: string } | undefined> {
        try {
            return (await hub(this.server).repositoryText(image)) ?? undefined;
        } catch (error) {
            upstreamReason(error);
            return undefined;
        }
    }

    /** The evidence for an image; `found` is what its inspected documentation says, when it was inspected. */
    async detect(image: string, found: FoundInDocs[] = [], recipe?: Recipe): Promise<Detection> {
        const key = JSON.stringify([image, found, recipe?.id ?? null]);
        const version = await recipes(this.server).version();
        const cached = this.#cache.get(key);
        if (cached && cached.version === version && Date.now() - cached.at < CACHE_MS) {
            return cached.detection;
        }

        const detection = await this.#detect(image, found, recipe);
        if (this.#cache.size >= CACHE_ENTRIES) {
            this.#cache.delete(this.#cache.keys().next().value as string);
        }

        this.#cache.set(key, { at: Date.now(), version, detection });
        return detection;
    }

    async #detect(image: string, found: FoundInDocs[], recipe: Recipe | undefined): Promise<Detection> {
        const match: RecipeMatch | null = recipe ? { recipe, how: 'exact' } : await recipes(this.server).forImage(image);
        const curated = curatedFor(image);
        const slugs = [curated?.slug, match?.recipe.id].filter((slug): slug is string => slug !== undefined);
        const claims = [
            ...(match ? recipeClaims(match.recipe) : []),
            ...(curated ? curatedClaims(curated) : []),
            ...guideClaims(image, slugs),
            ...foundClaims(found),
        ];
        return {
            image,
            recipe: match
                ? {
                      id: match.recipe.id,
                      title: match.recipe.title,
                      level: match.recipe.level,
                      method: match.recipe.method,
                      match: match.how,
                  }
                : null,
            app: curated?.app ?? match?.recipe.title ?? null,
            evidence: mergeClaims(claims),
        };
    }
}

export const evidence = defineService<EvidenceService>('evidence', (server) => new EvidenceService(server));
