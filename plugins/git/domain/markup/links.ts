// Where a rendered document's relative links and images point: the render context (a repository, a file in it,
// a comment or a wiki page) gives the bases they resolve against.

export interface LinkBases {
    rootUrl: string;
    linkBase: string; // relative links resolve against this (ends with '/')
    mediaBase: string; // relative images resolve against this (ends with '/')
    wikiBase?: string; // [[Page]] links resolve against this, only in wiki mode
    repoBase?: string; // '<rootUrl>{owner}/{repo}/' when known
}

interface RepoContext {
    owner?: string;
    repo?: string;
    refPath?: string;
}

const SCHEME_PATTERN = /^[a-z][a-z0-9+.-]*:/i;

function joinUrl(...parts: string[]): string {
    const path = parts
        .filter((part) => part !== '' && part !== '.')
        .map((part) => part.replace(/^\/+|\/+$/g, ''))
        .join('/');
    return path === '' ? '' : `${path}/`;
}

export function escapePathSegments(path: string): string {
    return path
        .split('/')
        .map((segment) => encodeURIComponent(segment))
        .join('/');
}

function contextPath(context: string, rootUrl: string): string {
    if (context.startsWith(rootUrl)) {
        return context.slice(rootUrl.length);
    }
    if (SCHEME_PATTERN.test(context)) {
        try {
            return new URL(context).pathname;
        } catch {
            return '';
        }
    }
    return context;
}

// '/{owner}/{repo}/src/{branch|commit|tag}/{ref...}/{dir}' or '/{owner}/{repo}'
function parseContext(context: string, rootUrl: string, fileDir: string): RepoContext {
    const fields = contextPath(context, rootUrl)
        .split('/')
        .filter((field) => field !== '');
    const srcIndex = fields.indexOf('src');
    if (srcIndex >= 2 && ['branch', 'commit', 'tag'].includes(fields[srcIndex + 1] ?? '') && fields.length > srcIndex + 2) {
        let refPath = fields.slice(srcIndex + 1).join('/');
        if (fileDir !== '' && refPath.endsWith(`/${fileDir}`)) {
            refPath = refPath.slice(0, -fileDir.length - 1);
        }
        return { owner: fields[srcIndex - 2], repo: fields[srcIndex - 1], refPath };
    }
    return fields.length >= 2 ? { owner: fields[0], repo: fields[1] } : {};
}

function repoBaseOf(rootUrl: string, repo: RepoContext): string | undefined {
    if (repo.owner === undefined || repo.repo === undefined) {
        return undefined;
    }
    return `${rootUrl}${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/`;
}

function directoryOf(filePath: string): string {
    const trimmed = filePath.replace(/^\/+/, '');
    const slash = trimmed.lastIndexOf('/');
    return slash === -1 ? '' : trimmed.slice(0, slash);
}

export function plainBases(rootUrl: string): LinkBases {
    return { rootUrl, linkBase: rootUrl, mediaBase: rootUrl };
}

export function fileBases(rootUrl: string, context: string, filePath: string): LinkBases {
    const fileDir = directoryOf(filePath);
    const repo = parseContext(context, rootUrl, fileDir);
    const repoBase = repoBaseOf(rootUrl, repo);
    if (repoBase === undefined) {
        return plainBases(rootUrl);
    }
    const refPath = escapePathSegments(repo.refPath ?? '');
    const dir = escapePathSegments(fileDir);
    return {
        rootUrl,
        repoBase,
        linkBase: repoBase + joinUrl('src', refPath, dir),
        mediaBase: repoBase + joinUrl('media', refPath, dir),
    };
}

export function commentBases(rootUrl: string, context: string): LinkBases {
    const repoBase = repoBaseOf(rootUrl, parseContext(context, rootUrl, ''));
    const base = repoBase ?? rootUrl;
    return { rootUrl, repoBase, linkBase: base, mediaBase: base };
}

export function wikiBases(rootUrl: string, context: string): LinkBases {
    const repoBase = repoBaseOf(rootUrl, parseContext(context, rootUrl, ''));
    const wikiBase = `${repoBase ?? rootUrl}wiki/`;
    return { rootUrl, repoBase, linkBase: wikiBase, mediaBase: `${wikiBase}raw/`, wikiBase };
}

export function resolveUrl(url: string, base: string, rootUrl: string): string {
    if (url === '' || url.startsWith('#') || url.startsWith('//') || SCHEME_PATTERN.test(url)) {
        return url;
    }
    try {
        return new URL(url.startsWith('/') ? url.slice(1) : url, url.startsWith('/') ? rootUrl : base).href;
    } catch {
        return url;
    }
}
