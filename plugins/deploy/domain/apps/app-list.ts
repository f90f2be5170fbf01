/**
 * The apps list: a summary of each app on one page, from the columns the list needs (never the draft or anything
 * sealed), its access mode and last run read for the whole page at once. The full view is GET /api/apps/{name}.
 */
import type { Server } from '@hapi/hapi';

import type { Page, Paging } from '../../../../lib/paging.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { type AccessMode, appAccess } from '../access/access-service.ts';
import { recipes } from '../recipes/recipe-service.ts';
import { runs, type RunSummary } from '../runs/run-service.ts';
import { type AppFilters, type AppListRow, apps } from './app-service.ts';
import { appUrl } from '../access/sign-in-check.ts';

export interface AppSummary extends Omit<AppListRow, 'account' | 'recipeId' | 'access'> {
    url: string;
    /** The sign-in method in force: the draft's, or its recipe's when the draft leaves it to the recipe; '' for none yet. */
    method: string;
    access: AccessMode;
    lastRun: RunSummary | null;
}

/** The method in force for each app, its recipe looked up once per recipe and image of the page. */
async function methodsOf(server: Server, rows: AppListRow[]): Promise<Map<string, string>> {
    const recipeMethods = new Map<string, Promise<string>>();
    const recipeMethod = (row: AppListRow) => {
        const key = JSON.stringify([row.recipeId, row.image]);
        let method = recipeMethods.get(key);
        if (!method) {
            method = recipes(server)
                .forApp(row)
                .then((recipe) => recipe?.method ?? '');
            recipeMethods.set(key, method);
        }

        return method;
    };
    const methods = await Promise.all(
        rows.map(async (row) => (row.account === '' || row.account === 'recipe' ? await recipeMethod(row) : row.account)),
    );
    return new Map(rows.map((row, index) => [row.name, methods[index] ?? '']));
}

/**
 * Pages of summaries, the same for every signed-in person, kept until a table they are read from is written: the
 * apps, their runs and recorded objects at the provider (access mode), the settings (the provider's connection) and
 * the saved recipes (the method).
 */
const summaryPages = defineService<ReadCache<Page<AppSummary>>>('appSummaryPages', (owner) =>
    readCache(owner, ['dp_apps', 'dp_runs', 'dp_app_resources', 'instance_settings', 'dp_recipes']),
);

/** `asOf`: the request's snapshot of the write counters (its session look-up's). */
export async function appSummaries(server: Server, filters: AppFilters, paging: Paging, asOf?: VersionSnapshot): Promise<Page<AppSummary>> {
    const key = JSON.stringify([filters.q ?? null, filters.state ?? null, paging.limit, paging.offset]);
    return await summaryPages(server).get(key, async () => await loadSummaries(server, filters, paging), asOf);
}

async function loadSummaries(server: Server, filters: AppFilters, paging: Paging): Promise<Page<AppSummary>> {
    const page = await apps(server).listPage(filters, paging);
    const names = page.items.map((row) => row.name);
    const [methods, modes, lastRuns] = await Promise.all([
        methodsOf(server, page.items),
        appAccess(server).modesOf(page.items),
        runs(server).lastOfApps(names),
    ]);
    const items = page.items.map((row) => ({
        name: row.name,
        title: row.title,
        state: row.state,
        image: row.image,
        tag: row.tag,
        domain: row.domain,
        url: appUrl(server.app.config.host, row.domain),
        method: methods.get(row.name) ?? '',
        access: modes.get(row.name) ?? 'public',
        lastRun: lastRuns.get(row.name) ?? null,
    }));
    return { items, total: page.total };
}
