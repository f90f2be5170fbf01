import type { ComponentType, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { signInUrl, useSession } from './api.ts';
import { ErrorText } from './components/ErrorText.tsx';
import { Spinner } from './components/Spinner.tsx';
import { Layout, PublicLayout } from './layout/Layout.tsx';
import { usePageTitle } from './layout/page-title.ts';
import { AppsPage } from './pages/apps/index.tsx';
import { DashboardPage } from './pages/dashboard/index.tsx';
import { MfaPage } from './pages/mfa/index.tsx';
import { SetupPage } from './pages/setup/index.tsx';
import { SignInPage } from './pages/sign-in/index.tsx';
import { Link, matchPath, navigate, useLocation } from './router.tsx';

type Params = Record<string, string>;

/**
 * A page loaded when first shown: the app and admin pages carry the editors (CodeMirror) and forms that the
 * dashboard does not need, so they stay out of the first download.
 */
function lazyPage<Props extends object>(load: () => Promise<ComponentType<Props>>): ComponentType<Props> {
    let loaded: ComponentType<Props> | undefined;
    return function LazyPage(props: Props) {
        const [component, setComponent] = useState<ComponentType<Props> | undefined>(() => loaded);
        const [error, setError] = useState<Error | undefined>(undefined);
        useEffect(() => {
            if (!loaded) {
                load().then(
                    (found) => {
                        loaded = found;
                        setComponent(() => found);
                    },
                    (failure: unknown) => setError(failure instanceof Error ? failure : new Error(String(failure))),
                );
            }
        }, []);
        if (error) {
            return <ErrorText error={`This page could not be loaded (${error.message}); reload to try again.`} />;
        }

        const Page = component;
        return Page ? <Page {...props} /> : <Spinner />;
    };
}

const NewAppPage = lazyPage(async () => (await import('./pages/new-app/index.tsx')).NewAppPage);
const AppPage = lazyPage(async () => (await import('./pages/app/index.tsx')).AppPage);
const AccountPage = lazyPage(async () => (await import('./pages/account/index.tsx')).AccountPage);
const AdminPage = lazyPage(async () => (await import('./pages/admin/index.tsx')).AdminPage);
const RecipesPage = lazyPage(async () => (await import('./pages/recipes/index.tsx')).RecipesPage);

interface Route {
    path: string;
    /** Reachable without a session (setup and signing in). */
    public?: boolean;
    render: (params: Params) => JSX.Element;
}

/** The first matching route wins: `/apps/new` before `/apps/:name`. */
export const ROUTES: Route[] = [
    { path: '/setup', public: true, render: () => <SetupPage /> },
    { path: '/sign-in', public: true, render: () => <SignInPage /> },
    { path: '/sign-in/mfa', public: true, render: () => <MfaPage /> },
    { path: '/', render: () => <DashboardPage /> },
    { path: '/apps', render: () => <AppsPage /> },
    { path: '/apps/new', render: () => <NewAppPage /> },
    { path: '/apps/:name', render: ({ name }) => <AppPage key={name} name={name ?? ''} /> },
    { path: '/apps/:name/:tab', render: ({ name }) => <AppPage key={name} name={name ?? ''} /> },
    { path: '/recipes', render: () => <RecipesPage /> },
    { path: '/account', render: () => <AccountPage /> },
    { path: '/admin', render: () => <AdminPage /> },
    { path: '/admin/:section', render: ({ section }) => <AdminPage section={section} /> },
];

export function findRoute(pathname: string): { route: Route; params: Params } | undefined {
    for (const route of ROUTES) {
        const params = matchPath(route.path, pathname);
        if (params) {
            return { route, params };
        }
    }

    return undefined;
}

function NotFoundPage() {
    usePageTitle('Not found');
    return (
        <>
            <h1>Page not found</h1>
            <p>
                There is no page at this address. <Link href="/">Go to the dashboard</Link>.
            </p>
        </>
    );
}

/** Without a session, a page sends the browser to sign in and back here afterwards. */
function SignInRedirect() {
    useEffect(() => {
        // An OIDC sign-in the server refused comes back to /?signin=failed: the sign-in page says so.
        const failed = new URLSearchParams(window.location.search).get('signin') === 'failed';
        navigate(failed ? '/sign-in?signin=failed' : signInUrl(), { replace: true });
    }, []);
    return <Spinner label="Going to the sign-in page…" />;
}

/** After a navigation inside the app, focus goes to the new page, as after a page load. */
function useFocusOnNavigation(pathname: string): void {
    const first = useRef(true);
    useEffect(() => {
        if (first.current) {
            first.current = false;
            return;
        }

        document.getElementById('main')?.focus({ preventScroll: true });
    }, [pathname]);
}

export function App() {
    const location = useLocation();
    const { user, loading } = useSession();
    useFocusOnNavigation(location.pathname);
    const found = findRoute(location.pathname);

    if (found?.route.public) {
        return <PublicLayout>{found.route.render(found.params)}</PublicLayout>;
    }

    if (loading) {
        return (
            <PublicLayout>
                <Spinner />
            </PublicLayout>
        );
    }

    if (!user) {
        return (
            <PublicLayout>
                <SignInRedirect />
            </PublicLayout>
        );
    }

    return (
        <Layout user={user} pathname={location.pathname}>
            {found ? found.route.render(found.params) : <NotFoundPage />}
        </Layout>
    );
}
