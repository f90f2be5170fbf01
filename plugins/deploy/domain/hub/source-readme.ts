/**
 * The README of the source repository an image's `org.opencontainers.image.source` label names: the label is the
 * image publisher's text, so the address is only built from an http(s) URL's origin and path, and fetched through
 * the look-ups' Upstream (HUB_ALLOWED_HOST_LIST at every hop, redirects on its own origin only, a bounded answer).
 */
import type { Upstream } from './upstream.ts';

export const SOURCE_LABEL = 'org.opencontainers.image.source';
/** A README is documentation, not a download: longer ones are cut short by the scan anyway. */
const MAX_README_BYTES = 512 * 1024;
const REPOSITORY_PATH = /^\/[\w.-]+\/[\w.-]+(?:\/[\w.-]+)*$/;

/**
 * Where the README of the repository at `source` is served raw: GitHub's from raw.githubusercontent.com, GitLab's
 * under `/-/raw/HEAD/`, any other forge's (Gitea, Forgejo) under `/raw/HEAD/`. Undefined for anything else.
 */
export function sourceReadmeUrl(source: string): string | undefined {
    let url: URL;
    try {
        url = new URL(source.trim());
    } catch {
        return undefined;
    }

    const path = url.pathname.replace(/\.git$/, '').replace(/\/+$/, '');
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || !REPOSITORY_PATH.test(path)) {
        return undefined;
    }

    if (url.hostname === 'github.com') {
        const [owner, repository] = path.slice(1).split('/');
        return `https://raw.githubusercontent.com/${owner}/${repository}/HEAD/README.md`;
    }

    return `${url.origin}${path}${url.hostname === 'gitlab.com' ? '/-/raw/HEAD/README.md' : '/raw/HEAD/README.md'}`;
}

/** The README's text, or undefined when the label names no repository or the forge does not answer it. */
export async function fetchSourceReadme(upstream: Upstream, source: string): Promise<string | undefined> {
    const address = sourceReadmeUrl(source);
    if (!address) {
        return undefined;
    }

    const answer = await upstream.request(`the source repository's README (${address})`, address, { maxBytes: MAX_README_BYTES });
    return answer.status === 200 ? answer.body.toString('utf8') : undefined;
}
