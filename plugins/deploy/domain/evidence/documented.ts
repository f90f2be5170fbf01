/**
 * The "Documented" evidence: the curated list of popular apps (`assets/sso/curated-sso.json`: exact settings and a
 * link per fact) and the index of authentik's integration guides (`assets/sso/authentik-integrations.json`). Both
 * ship with Gatehouse (assets/sso/SOURCE.md) and are read once.
 */
import Fs from 'node:fs';

import { ROOT_DIR } from '../../../../lib/paths.ts';
import { imageName, matchRecipe } from '../recipes/image-match.ts';
import type { Recipe } from '../recipes/recipe-types.ts';

const CURATED_FILE = `${ROOT_DIR}/assets/sso/curated-sso.json`;
const GUIDES_FILE = `${ROOT_DIR}/assets/sso/authentik-integrations.json`;

export interface CuratedMethod {
    paid?: boolean;
    unverified?: boolean | string;
    sources?: string[];
    env?: Record<string, string>;
    how?: string;
    where?: string;
    plugin?: string;
    third_party_plugin?: string;
    app_required?: string;
    adapter?: string;
}

export interface CuratedApp {
    app: string;
    slug: string;
    images: string[];
    authentik_guide: string | null;
    methods: Record<string, CuratedMethod>;
    ldap: { sources?: string[]; how?: string; [key: string]: unknown } | string | null;
    sources: string[];
}

export interface IntegrationGuide {
    app: string;
    slug: string;
    providers: string[];
    docs_url: string;
}

let curated: CuratedApp[] | undefined;
let guides: IntegrationGuide[] | undefined;

export function curatedApps(): CuratedApp[] {
    curated ??= JSON.parse(Fs.readFileSync(CURATED_FILE, 'utf8')) as CuratedApp[];
    return curated;
}

export function integrationGuides(): IntegrationGuide[] {
    guides ??= JSON.parse(Fs.readFileSync(GUIDES_FILE, 'utf8')) as IntegrationGuide[];
    return guides;
}

/** The curated apps as recipes of their image names, for matching (made once). */
let curatedAsRecipes: Recipe[] | undefined;

/** The curated entry for an image, matched as recipes are (exact, alias, unambiguous name). */
export function curatedFor(image: string): CuratedApp | undefined {
    const apps = curatedApps();
    curatedAsRecipes ??= apps.map((app, index) => ({
        id: String(index),
        image: app.images[0] ?? app.slug,
        aliases: app.images.slice(1),
        title: app.app,
        method: 'own',
        level: 'documented',
        sources: app.sources,
        origin: { kind: 'file', path: 'assets/sso/curated-sso.json' },
    }));
    const match = matchRecipe(image, curatedAsRecipes);
    return match ? apps[Number(match.recipe.id)] : undefined;
}

/** The integration guide for an app: by the curated slug or the recipe's id, else by the image's name. */
export function guideFor(image: string, slugs: string[]): IntegrationGuide | undefined {
    const all = integrationGuides();
    const candidates = [...slugs, imageName(image).name];
    return candidates.map((slug) => all.find((guide) => guide.slug === slug)).find((guide) => guide !== undefined);
}

/** authentik's provider types as sign-in methods; LDAP is information only. */
export const GUIDE_PROVIDER_METHODS: Record<string, string> = {
    'OAuth2/OIDC': 'oidc',
    SAML: 'saml',
    Proxy: 'header',
    LDAP: 'ldap',
};
