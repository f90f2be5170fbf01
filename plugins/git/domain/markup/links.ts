// Where a rendered document's links and images point, as Gitea's render helpers (models/renderhelper) resolve them
// for the markup API: the mode picks the helper, the Context names the repository (and the ref of a file).

import { goParseUrl, goPathDir, goPathJoin } from './go-url.ts';

/** Gitea's link types: a link to a page ('default') or to the bytes of a file ('media', image sources). */
export type LinkType = 'default' | 'media';

export interface LinkResolver {
    /** A link or image source of the document, made absolute. */
    resolve(link: string, type: LinkType): string;
    /** A link from the site's root, such as a mention's user page. */
    resolveRoot(link: string): string;
    /** '<rootUrl>{owner}/{repo}/' when the context names a repository. */
    repoBase?: string;
}

interface RenderTarget {
    owner: string;
    repo: string;
    /** 'branch/main', 'commit/<sha>'... for a file's context. */
    refPath: string;
    /** The file's folder in the tree ('.' at the top), for a file's context. */
    treePath: string;
}

interface Site {
    rootUrl: string;
    /** ROOT_URL's path without its trailing slash ('' at the host's root), Gitea's AppSubURL. */
    subUrl: string;
    /** ROOT_URL without its path, to which relative links are appended. */
    hostUrl: string;
}

function siteOf(rootUrl: string): Site {
    const url = new URL(rootUrl);
    const subUrl = url.pathname.replace(/\/+$/, '');
    return { rootUrl, subUrl, hostUrl: `${url.protocol}//${url.host}` };
}

// routers/common/markup.go: '{owner}/{repo}/src/{branch|commit|tag}/{ref...}/{dir}' or '{owner}/{repo}', after the sub-URL.
function targetOf(context: string, filePath: string, site: Site): RenderTarget {
    const path = context.startsWith(`${site.subUrl}/`) ? context.slice(site.subUrl.length + 1) : context;
    const fields = splitN(path, '/', 5);
    if (fields.length === 5 && fields[2] === 'src' && ['branch', 'commit', 'tag'].includes(fields[3] ?? '')) {
        const treePath = goPathDir(filePath);
        const refPath = fields.slice(3).join('/');
        const suffix = `/${treePath}`;
        return {
            owner: fields[0] ?? '',
            repo: fields[1] ?? '',
            refPath: refPath.endsWith(suffix) ? refPath.slice(0, -suffix.length) : refPath,
            treePath,
        };
    }
    const pair = splitN(path, '/', 3);
    return pair.length === 2
        ? { owner: pair[0] ?? '', repo: pair[1] ?? '', refPath: '', treePath: '' }
        : { owner: '', repo: '', refPath: '', treePath: '' };
}

/** Go's strings.SplitN. */
function splitN(text: string, separator: string, count: number): string[] {
    const parts = text.split(separator);
    return parts.length <= count ? parts : [...parts.slice(0, count - 1), parts.slice(count - 1).join(separator)];
}

/**
 * httplib.MakeAbsoluteURL, but for one case: rendering without a repository, Gitea builds the repository's links as
 * '{owner}/{repo}/...', without its sub-URL, and appends them to the host. Under a sub-URL that points outside the
 * site, so such a link is appended to ROOT_URL instead (the same URL when ROOT_URL has no path).
 */
function makeAbsolute(link: string, site: Site): string {
    if (link === '') {
        return site.rootUrl;
    }
    const parsed = goParseUrl(link);
    // httplib.IsRelativeURL: no scheme or host, and nothing a browser would take for one.
    const isRelative =
        parsed !== undefined && parsed.scheme === '' && parsed.host === '' && !/^[/\\][/\\]/.test(link) && !parsed.path.includes('\\');
    if (!isRelative) {
        return link;
    }
    return link.startsWith('/') ? site.hostUrl + link : site.rootUrl + link;
}

/** markup.resolveLinkRelative: the link against '{base}/{cur}', never above base; URLs with a scheme or host as they are. */
function resolveLinkRelative(base: string, current: string, link: string, site: Site): string {
    const parsed = goParseUrl(link);
    if (parsed === undefined || parsed.scheme !== '' || parsed.host !== '') {
        return link;
    }
    let cur = current;
    let resolved = '';
    if (link.startsWith('/')) {
        // Gitea tolerates absolute paths that already carry a deep enough base.
        if (link.startsWith(base) && base.split('/').length - 1 >= 4) {
            resolved = link;
        } else {
            cur = '';
        }
    }
    if (resolved === '') {
        resolved = (base.replace(/\/$/, '') + goPathJoin(`/${cur}`, `/${parsed.escapedPath}`)).replace(/\/$/, '');
        resolved += parsed.rawQuery === '' ? '' : `?${parsed.rawQuery}`;
        resolved += parsed.fragment === '' ? '' : `#${parsed.fragment}`;
    }
    return makeAbsolute(resolved, site);
}

function resolver(site: Site, target: RenderTarget, bases: Record<LinkType, { base: string; cur: string }>): LinkResolver {
    return {
        resolve: (link, type) => resolveLinkRelative(bases[type].base, bases[type].cur, link, site),
        resolveRoot: (link) => resolveLinkRelative(`${site.subUrl}/`, '', link, site),
        repoBase:
            target.owner === '' ? undefined : `${site.rootUrl}${encodeURIComponent(target.owner)}/${encodeURIComponent(target.repo)}/`,
    };
}

/** gfm and file modes: links into the tree ('src'), images from the raw files ('media'), both from the file's folder. */
export function fileLinks(rootUrl: string, context: string, filePath: string): LinkResolver {
    const site = siteOf(rootUrl);
    const target = targetOf(context, filePath, site);
    const repoLink = `${target.owner}/${target.repo}`;
    return resolver(site, target, {
        default: { base: goPathJoin(repoLink, 'src', target.refPath), cur: target.treePath },
        media: { base: goPathJoin(repoLink, 'media', target.refPath), cur: target.treePath },
    });
}

/** comment mode: links and images both from the repository's page. */
export function commentLinks(rootUrl: string, context: string): LinkResolver {
    const site = siteOf(rootUrl);
    const target = targetOf(context, '', site);
    const repoLink = target.owner === '' ? '' : `${target.owner}/${target.repo}`;
    return resolver(site, target, { default: { base: repoLink, cur: '' }, media: { base: repoLink, cur: '' } });
}

/** wiki mode: links to wiki pages, images from the wiki's raw files. */
export function wikiLinks(rootUrl: string, context: string): LinkResolver {
    const site = siteOf(rootUrl);
    const target = targetOf(context, '', site);
    const repoLink = `${target.owner}/${target.repo}`;
    return resolver(site, target, {
        default: { base: goPathJoin(repoLink, 'wiki'), cur: '' },
        media: { base: goPathJoin(repoLink, 'wiki/raw'), cur: '' },
    });
}
