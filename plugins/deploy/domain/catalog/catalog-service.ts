/**
 * The catalog: what an app can be made from. The recipes that carry a compose template (every shipped recipe has
 * one, so a fresh install lists them), then the lists people already keep (Portainer App Templates from
 * CATALOG_URLS), each template matched to a recipe for its sign-in method.
 * An imported list is read again after a while; a list that cannot be read is reported, not fatal.
 */
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';

import { defineService } from '../../../../lib/services.ts';
import { matchRecipe } from '../recipes/image-match.ts';
import { recipes } from '../recipes/recipe-service.ts';
import type { Recipe } from '../recipes/recipe-types.ts';
import { type CatalogTemplate, MAX_CATALOG_BYTES, parsePortainerTemplates } from './portainer-templates.ts';
import { Service } from '../../../../lib/service.ts';

const REFRESH_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;

export interface CatalogEntry {
    id: string;
    title: string;
    description: string;
    image: string | null;
    method: string | null;
    level: string | null;
    recipe: string | null;
    source: string;
    logo: string | null;
    /** The one category the wizard groups and filters by: the recipe's, or an imported template's first. */
    category: string | null;
    categories: string[];
}

export interface CatalogSource {
    source: string;
    templates: number;
    skipped: number;
    error: string | null;
}

interface ImportedList {
    readAt: number;
    templates: CatalogTemplate[];
    report: CatalogSource;
}

async function readList(source: string): Promise<string> {
    if (!/^https?:\/\//.test(source)) {
        const size = Fs.statSync(source).size;
        if (size > MAX_CATALOG_BYTES) {
            throw new Error(`${size} bytes, at most ${MAX_CATALOG_BYTES}`);
        }

        return Fs.readFileSync(source, 'utf8');
    }

    const response = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) {
        throw new Error(`answered ${response.status}`);
    }

    const text = await response.text();
    if (Buffer.byteLength(text) > MAX_CATALOG_BYTES) {
        throw new Error(`more than ${MAX_CATALOG_BYTES} bytes`);
    }

    return text;
}

function fromRecipe(recipe: Recipe): CatalogEntry {
    return {
        id: recipe.id,
        title: recipe.title,
        description: recipe.description ?? '',
        image: `${recipe.image}:${recipe.tag ?? 'latest'}`,
        method: recipe.method,
        level: recipe.level,
        recipe: recipe.id,
        source: 'recipes',
        logo: null,
        category: recipe.category ?? null,
        categories: recipe.category ? [recipe.category] : [],
    };
}

/** An imported template's image without its tag, and the tag (latest when it names none). */
export function splitImage(reference: string): { image: string; tag: string } {
    const lastSlash = reference.lastIndexOf('/');
    const colon = reference.indexOf(':', lastSlash + 1);
    return colon === -1 ? { image: reference, tag: 'latest' } : { image: reference.slice(0, colon), tag: reference.slice(colon + 1) };
}

export class CatalogService extends Service {
    readonly #lists = new Map<string, ImportedList>();

    constructor(server: Server) {
        super(server);
    }

    async #imported(source: string): Promise<ImportedList> {
        const cached = this.#lists.get(source);
        if (cached && Date.now() - cached.readAt < REFRESH_MS) {
            return cached;
        }

        let list: ImportedList;
        try {
            const parsed = parsePortainerTemplates(await readList(source), source);
            const report = { source, templates: parsed.templates.length, skipped: parsed.skipped.length, error: null };
            list = { readAt: Date.now(), templates: parsed.templates, report };
        } catch (error) {
            // A list that cannot be read now keeps what was read before, if anything.
            const report = { source, templates: cached?.templates.length ?? 0, skipped: 0, error: (error as Error).message.slice(0, 300) };
            list = { readAt: Date.now(), templates: cached?.templates ?? [], report };
        }

        this.#lists.set(source, list);
        return list;
    }

    /** The imported templates an app can be made from: those with an image (stacks need their compose file fetched). */
    async importedTemplates(): Promise<{ templates: CatalogTemplate[]; sources: CatalogSource[] }> {
        const lists = await Promise.all(this.server.app.config.apps.catalogUrls.map((source) => this.#imported(source)));
        return { templates: lists.flatMap((list) => list.templates), sources: lists.map((list) => list.report) };
    }

    async templates(): Promise<{ templates: CatalogEntry[]; sources: CatalogSource[] }> {
        const known = await recipes(this.server).all();
        const own = known.filter((recipe) => recipe.compose !== undefined).map(fromRecipe);
        const { templates, sources } = await this.importedTemplates();
        const imported = templates.map((template): CatalogEntry => {
            const match = template.image ? matchRecipe(splitImage(template.image).image, known) : null;
            return {
                id: template.id,
                title: template.title,
                description: template.description,
                image: template.image,
                method: match?.recipe.method ?? null,
                level: match?.recipe.level ?? null,
                recipe: match?.recipe.id ?? null,
                source: template.source,
                logo: template.logo,
                category: template.categories[0] ?? null,
                categories: template.categories,
            };
        });
        return {
            templates: [...own, ...imported],
            sources: [{ source: 'recipes', templates: own.length, skipped: 0, error: null }, ...sources],
        };
    }

    /** The imported container template of that id, if any. */
    async importedTemplate(id: string): Promise<CatalogTemplate | undefined> {
        return (await this.importedTemplates()).templates.find((template) => template.id === id && template.image !== null);
    }
}

export const catalog = defineService<CatalogService>('catalog', (server) => new CatalogService(server));
