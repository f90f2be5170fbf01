/**
 * No login in the app after the provider's: the app's recipe turns its own login off (an environment setting), so
 * forward auth is the only door. The check asks the app directly, as nginx does: it must answer a page without
 * asking for a password.
 */
import { DomUtils, parseDocument } from 'htmlparser2';

import { maybeOnOrigin, OffOriginError, onOrigin } from '../../../lib/app-urls.ts';
import { findLoginForm } from '../autologin/adapters/form.ts';
import { appUpstream } from './autologin.ts';
import type { MethodCheck, MethodCheckContext, MethodCheckHelpers, MethodSettings, SignInMethod } from '../method-types.ts';

const MAX_REDIRECTS = 5;
const PAGE_BYTES = 512 * 1024;

function setting(settings: MethodSettings): string {
    const recipe = settings.recipe;
    if (!recipe) {
        return "none: no recipe says how this app's login is turned off";
    }

    const set = Object.entries(recipe.env).map(([name, value]) => `${name}=${value}`);
    const removed = recipe.remove.map((name) => `${name} removed`);
    return [...set, ...removed, ...recipe.steps].join('; ') || `the recipe ${recipe.title} changes nothing`;
}

function hasPasswordField(html: string): boolean {
    const isPassword = (element: { name: string; attribs: Record<string, string> }) =>
        element.name === 'input' && element.attribs.type?.toLowerCase() === 'password';
    return findLoginForm(html) !== undefined || DomUtils.findOne(isPassword, parseDocument(html).children) !== null;
}

/** The next page of a redirect, when it stays on the app: its public origin, or the domain as the check asks it. */
function nextPage(location: string, current: URL, settings: MethodSettings, upstream: string): URL {
    const asked = `http://${settings.domain}`;
    const seen = new URL(`${current.pathname}${current.search}`, asked);
    const target = maybeOnOrigin(location, seen, asked) ?? maybeOnOrigin(location, seen, settings.origin);
    if (!target) {
        throw new OffOriginError(location, settings.origin);
    }

    return onOrigin(`${target.pathname}${target.search}`, upstream);
}

/** Follows the app's own redirects (on its origin) from `/` to the page it shows a visitor. */
async function pageOf(
    upstream: string,
    settings: MethodSettings,
    checkHttp: MethodCheckHelpers['checkHttp'],
): Promise<{ path: string; status: number | null; body: string; error: string | null }> {
    let url = onOrigin('/', upstream);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
        const answer = await checkHttp({ url, host: settings.domain, readBody: PAGE_BYTES, headers: { accept: 'text/html' } });
        const path = `${url.pathname}${url.search}`;
        if (!answer.statusCode || answer.statusCode < 300 || answer.statusCode >= 400 || !answer.location) {
            return { path, status: answer.statusCode, body: answer.body ?? '', error: answer.error };
        }

        try {
            url = nextPage(answer.location, url, settings, upstream);
        } catch (error) {
            if (!(error instanceof OffOriginError)) throw error;
            return { path, status: null, body: '', error: `a redirect that was refused: ${error.message}` };
        }
    }

    return { path: url.pathname, status: null, body: '', error: `more than ${MAX_REDIRECTS} redirects` };
}

async function check({ settings, site, readSite, checkHttp }: MethodCheckContext): Promise<MethodCheck> {
    const upstream = appUpstream(readSite(site));
    const fix = "check the recipe's setting in the app's compose file (its Compose tab) and the app's logs";
    if (!upstream) {
        return { ok: false, text: 'the site proxies to no app', fix };
    }

    const page = await pageOf(upstream, settings, checkHttp);
    if (page.status === null || page.status >= 400) {
        return { ok: false, text: `the app answered ${page.path} with ${page.error ?? `status ${page.status}`}`, fix };
    }

    if (hasPasswordField(page.body)) {
        return { ok: false, text: `the app still asks for a password at ${page.path}: its own login is on`, fix };
    }

    return { ok: true, text: `the app answers ${page.path} without its own login`, fix: null };
}

const none: SignInMethod = {
    title: "No login in the app after the provider's",
    singleSignOn: true,
    needs: [],
    needsRecipe: true,
    values: (settings) => ({ setting: setting(settings) }),
    check,
};

export default none;
