/**
 * Which recipe applies to an image: the exact image, then the recipes' aliases (mirrors and forks), then a name
 * match that only one recipe claims. References are compared the way registries name them: `nginx`,
 * `library/nginx` and `docker.io/library/nginx` are one image; a tag never matters unless the recipe names a tag
 * pattern (`gitea/gitea:*-rootless`).
 */
import type { Recipe } from './recipe-types.ts';

const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_NAMES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

export interface ImageName {
    /** `docker.io/library/nginx`. */
    repository: string;
    /** The last part of the path: `nginx`. */
    name: string;
    tag: string | null;
}

/** The registry, path and tag of an image reference; the digest is left out. */
export function imageName(reference: string): ImageName {
    const withoutDigest = reference.trim().toLowerCase().split('@')[0] ?? '';
    const lastSlash = withoutDigest.lastIndexOf('/');
    const tagAt = withoutDigest.indexOf(':', lastSlash + 1);
    const path = tagAt === -1 ? withoutDigest : withoutDigest.slice(0, tagAt);
    const tag = tagAt === -1 ? null : withoutDigest.slice(tagAt + 1);
    const parts = path.split('/');
    const first = parts[0] ?? '';
    const hasRegistry = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
    const registry = hasRegistry ? (DOCKER_HUB_NAMES.has(first) ? DOCKER_HUB : first) : DOCKER_HUB;
    const rest = hasRegistry ? parts.slice(1) : parts;
    const repositoryPath = registry === DOCKER_HUB && rest.length === 1 ? ['library', ...rest] : rest;
    return { repository: `${registry}/${repositoryPath.join('/')}`, name: rest[rest.length - 1] ?? '', tag };
}

function tagMatches(pattern: string | null, tag: string | null): boolean {
    if (pattern === null) {
        return true;
    }

    const expression = new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`);
    return expression.test(tag ?? 'latest');
}

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `pattern` (a recipe's image or alias) names the image `reference`. */
export function namesImage(pattern: string, reference: string): boolean {
    const wanted = imageName(pattern);
    const image = imageName(reference);
    return wanted.repository === image.repository && tagMatches(wanted.tag, image.tag);
}

/** The path between the registry and the name: `gitea` of `gitea/gitea`, `library` of `nginx`. */
function namespaceOf(name: ImageName): string {
    return name.repository.split('/').slice(1, -1).join('/');
}

/**
 * Whether the image has the name of one of the recipe's images and more than the name speaks for it: the same
 * namespace (a mirror on another registry), or a name that is the project's own (the recipe's id or the namespace of
 * one of its images, as `grafana` of `grafana/grafana`). A bare `server` names too many projects.
 */
function sameProjectByName(image: ImageName, recipe: Recipe): boolean {
    const candidates = [recipe.image, ...(recipe.aliases ?? [])].map(imageName).filter((candidate) => candidate.name === image.name);
    const projectNames = new Set([recipe.id, ...candidates.map(namespaceOf)]);
    return (
        candidates.some((candidate) => namespaceOf(candidate) === namespaceOf(image)) ||
        (candidates.length > 0 && projectNames.has(image.name))
    );
}

export type MatchKind = 'exact' | 'alias' | 'name';

export interface RecipeMatch {
    recipe: Recipe;
    how: MatchKind;
}

/**
 * The recipe for an image, from recipes in order of preference (saved ones first): the first exact match, else the
 * first alias match, else the one recipe whose image or alias has the image's name and namespace (or whose project
 * that name is); two such recipes are no match.
 */
export function matchRecipe(reference: string, recipes: Recipe[]): RecipeMatch | null {
    const exact = recipes.find((recipe) => namesImage(recipe.image, reference));
    if (exact) {
        return { recipe: exact, how: 'exact' };
    }

    const alias = recipes.find((recipe) => (recipe.aliases ?? []).some((candidate) => namesImage(candidate, reference)));
    if (alias) {
        return { recipe: alias, how: 'alias' };
    }

    const image = imageName(reference);
    const named = recipes.filter((recipe) => sameProjectByName(image, recipe));
    const distinctImages = new Set(named.map((recipe) => imageName(recipe.image).repository));
    const only = named[0];
    return only && distinctImages.size === 1 ? { recipe: only, how: 'name' } : null;
}
