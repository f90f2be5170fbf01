import { useState } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { Badge, type BadgeLevel } from '../../components/Badge.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { dateTime } from '../../format/time.ts';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link } from '../../router.tsx';
import { methodWords } from '../../words.ts';

/** GET /api/recipes, one recipe as the list gives it (plugins/deploy/routes/recipes/handlers.ts). */
export interface RecipeSummary {
    id: string;
    title: string;
    image: string;
    aliases: string[];
    method: string;
    level: string;
    outcome: string | null;
    tested: { packaging: string; test: string } | null;
    origin: { kind: 'saved'; app: string; savedAt: string } | { kind: 'file' };
    template: boolean;
}

/** The real-login outcome groups of a recipe (recipes/recipe.schema.json `outcome`), in words. */
const OUTCOME_WORDS: Record<string, string> = {
    'admin-checked': 'One login with the provider’s user, admin checked',
    'user-login': 'One login with the provider’s user',
    'no-login-after-provider': 'No login after the provider’s',
    'set-up-once': 'Set up once in the app with the values shown',
    'master-password-kept': 'Master password kept by design',
    'no-free-sso': 'No single sign-on in the free edition',
};

/** What backs a tested recipe: the app whose sign-in check passed when it was saved, or the test of the suite that signs in. */
function BackedBy(props: { recipe: RecipeSummary }) {
    const { recipe } = props;
    if (recipe.origin.kind === 'saved') {
        return (
            <>
                The sign-in check of the app{' '}
                <Link href={`/apps/${encodeURIComponent(recipe.origin.app)}/account`}>{recipe.origin.app}</Link>, saved{' '}
                {dateTime(recipe.origin.savedAt)}
            </>
        );
    }

    if (recipe.tested) {
        return (
            <>
                <code>{recipe.tested.test}</code>, on {recipe.tested.packaging}
            </>
        );
    }

    return recipe.level === 'tested' ? <>Said to be tested by its own file</> : <span class="muted">Not tested here</span>;
}

function RecipesTable(props: { recipes: RecipeSummary[] }) {
    return (
        <div class="table-scroll">
            <table class="table recipes-table">
                <thead>
                    <tr>
                        <th scope="col">Title</th>
                        <th scope="col">Image</th>
                        <th scope="col">Method</th>
                        <th scope="col">Level</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">Backed by</th>
                        <th scope="col">
                            <span class="visually-hidden">File</span>
                        </th>
                    </tr>
                </thead>
                <tbody>
                    {props.recipes.map((recipe) => (
                        <tr key={recipe.id} data-recipe={recipe.id}>
                            <th scope="row">
                                {recipe.title}
                                <br />
                                <span class="muted">
                                    {recipe.origin.kind === 'saved' ? 'saved' : 'shipped'} · {recipe.id}
                                </span>
                            </th>
                            <td>
                                <code>{recipe.image}</code>
                            </td>
                            <td>{methodWords(recipe.method)}</td>
                            <td class="recipe-level">
                                <Badge level={recipe.level as BadgeLevel} />
                            </td>
                            <td>
                                {recipe.outcome ? (OUTCOME_WORDS[recipe.outcome] ?? recipe.outcome) : <span class="muted">Not said</span>}
                            </td>
                            <td>
                                <BackedBy recipe={recipe} />
                            </td>
                            <td>
                                <a
                                    class="button button-secondary"
                                    href={`/api/recipes/${encodeURIComponent(recipe.id)}`}
                                    download={`${recipe.id}.yaml`}
                                    aria-label={`Export ${recipe.title} (${recipe.id}) as a recipe file`}
                                >
                                    Export
                                </a>
                            </td>
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}

/** Every recipe, saved from working apps first, then the shipped files; each exported as a file for recipes/. */
export function RecipesPage() {
    usePageTitle('Recipes');
    const [query, setQuery] = useState('');
    const { data, error, loading } = useApi<{ recipes: RecipeSummary[] }>('/api/recipes');
    const words = query.trim().toLowerCase();
    const recipes = (data?.recipes ?? []).filter((recipe) =>
        words === '' ? true : [recipe.title, recipe.image, recipe.id, recipe.method].some((text) => text.toLowerCase().includes(words)),
    );
    const saved = data?.recipes.filter((recipe) => recipe.origin.kind === 'saved').length ?? 0;

    return (
        <div class="recipes-page">
            <div class="page-header">
                <h1>Recipes</h1>
            </div>
            <p>
                How each app’s visitors are known inside it. A recipe is <em>tested</em> when a real sign-in backs it: saved from an app
                whose sign-in check passed (the app’s Sign-in tab saves one), or checked by a test of the suite. Export writes the recipe as
                a file for a recipes folder.
            </p>
            <ErrorText error={error} />
            {loading && !data ? <Spinner /> : null}
            {data ? (
                <>
                    <div class="filters" role="search">
                        <div class="field field-inline">
                            <label for="recipes-search">Search</label>
                            <input
                                id="recipes-search"
                                type="search"
                                value={query}
                                onInput={(event) => setQuery(event.currentTarget.value)}
                            />
                        </div>
                    </div>
                    <p class="muted" role="status">
                        {recipes.length} of {data.recipes.length} recipes ({saved} saved from apps)
                    </p>
                    {recipes.length > 0 ? <RecipesTable recipes={recipes} /> : <p class="empty">No recipe matches.</p>}
                </>
            ) : null}
        </div>
    );
}
