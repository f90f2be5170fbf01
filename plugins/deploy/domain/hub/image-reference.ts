/**
 * Image references as the Docker CLI reads them (distribution's `reference/normalize.go`, 2.8): `nginx` is
 * `docker.io/library/nginx:latest`, a first component with a dot or a colon (or `localhost`) names the registry.
 */
import { ValidationError } from '../../../../lib/errors.ts';

export const DOCKER_HUB = 'docker.io';
/** Docker Hub's registry API. */
export const DOCKER_HUB_REGISTRY = 'https://registry-1.docker.io';

export interface ImageReference {
    /** `docker.io`, `ghcr.io`, `127.0.0.1:5000`. */
    registry: string;
    /** The repository inside the registry: `library/nginx`, `o/x`. */
    repository: string;
    tag: string | null;
    /** `sha256:<64 hex>`; when both are given, the digest is what is fetched. */
    digest: string | null;
}

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = new RegExp(`^${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]{1,5})?$`);
const NAME_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
export const TAG = /^[\w][\w.-]{0,127}$/;
export const DIGEST = /^sha256:[a-f0-9]{64}$/;
const MAX_NAME_LENGTH = 255;
const MAX_REFERENCE_LENGTH = 512;

/** Hosts Gatehouse reaches over plain HTTP: a registry on this machine (tests, a local mirror). */
const LOOPBACK_REGISTRY = /^(127\.0\.0\.1|localhost):[0-9]{1,5}$/;

function looksLikeRegistry(component: string): boolean {
    return component.includes('.') || component.includes(':') || component === 'localhost';
}

function splitRegistry(name: string): { registry: string; repository: string } {
    const slash = name.indexOf('/');
    const first = slash < 0 ? '' : name.slice(0, slash);
    if (slash < 0 || !looksLikeRegistry(first)) {
        return { registry: DOCKER_HUB, repository: name };
    }

    const registry = first === 'index.docker.io' ? DOCKER_HUB : first;
    return { registry, repository: name.slice(slash + 1) };
}

function checkRepository(repository: string): void {
    if (repository.length > MAX_NAME_LENGTH) {
        throw new ValidationError(`the repository name is longer than ${MAX_NAME_LENGTH} characters`);
    }

    if (repository !== repository.toLowerCase()) {
        throw new ValidationError('repository names are lower case');
    }

    if (!repository.split('/').every((component) => NAME_COMPONENT.test(component))) {
        throw new ValidationError(`${repository} is not a repository name (lower-case letters, digits and . _ - between them)`);
    }
}

/** Splits `name[:tag][@digest]`; the colon of a registry's port is not a tag's. */
function splitTagAndDigest(text: string): { name: string; tag: string | null; digest: string | null } {
    const at = text.indexOf('@');
    const digest = at < 0 ? null : text.slice(at + 1);
    const rest = at < 0 ? text : text.slice(0, at);
    const colon = rest.lastIndexOf(':');
    const hasTag = colon > rest.lastIndexOf('/');
    return { name: hasTag ? rest.slice(0, colon) : rest, tag: hasTag ? rest.slice(colon + 1) : null, digest };
}

/** Parses a reference, or throws a ValidationError saying what is wrong with it. */
export function parseImageReference(text: string): ImageReference {
    const trimmed = text.trim();
    if (trimmed === '' || trimmed.length > MAX_REFERENCE_LENGTH) {
        throw new ValidationError(`give an image reference of 1 to ${MAX_REFERENCE_LENGTH} characters`);
    }

    const { name, tag, digest } = splitTagAndDigest(trimmed);
    if (tag !== null && !TAG.test(tag)) {
        throw new ValidationError(`the tag "${tag}" is not valid: 1 to 128 letters, digits, _ . or -, not starting with . or -`);
    }

    if (digest !== null && !DIGEST.test(digest)) {
        throw new ValidationError(`the digest "${digest}" is not valid: sha256: and 64 lower-case hexadecimal digits`);
    }

    const { registry, repository: given } = splitRegistry(name);
    if (!DOMAIN.test(registry)) {
        throw new ValidationError(`${registry} is not a registry host`);
    }

    const repository = registry === DOCKER_HUB && !given.includes('/') ? `library/${given}` : given;
    checkRepository(repository);
    return { registry, repository, tag: tag ?? (digest === null ? 'latest' : null), digest };
}

/** A repository without tag or digest (`nginx`, `ghcr.io/o/x`), for tag listings. */
export function parseRepositoryName(text: string): ImageReference {
    const reference = parseImageReference(text);
    const { name } = splitTagAndDigest(text.trim());
    if (name !== text.trim()) {
        throw new ValidationError('give the repository without a tag or digest');
    }

    return { ...reference, tag: null };
}

/** `nginx`, `bitnami/nginx`, `ghcr.io/o/x`: the name as people write it. */
export function familiarName(reference: Pick<ImageReference, 'registry' | 'repository'>): string {
    if (reference.registry !== DOCKER_HUB) {
        return `${reference.registry}/${reference.repository}`;
    }

    return reference.repository.startsWith('library/') ? reference.repository.slice('library/'.length) : reference.repository;
}

/** `docker.io/library/nginx:1.25`, `ghcr.io/o/x@sha256:...`: every part spelled out. */
export function canonicalReference(reference: ImageReference): string {
    const tag = reference.tag === null ? '' : `:${reference.tag}`;
    const digest = reference.digest === null ? '' : `@${reference.digest}`;
    return `${reference.registry}/${reference.repository}${tag}${digest}`;
}

/** Where the registry's HTTP API answers: Docker Hub's at registry-1.docker.io; loopback over plain HTTP. */
export function registryBaseUrl(registry: string): string {
    if (registry === DOCKER_HUB) {
        return DOCKER_HUB_REGISTRY;
    }

    return LOOPBACK_REGISTRY.test(registry) ? `http://${registry}` : `https://${registry}`;
}
