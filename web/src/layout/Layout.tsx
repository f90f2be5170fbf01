import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

import { type SessionUser, isAdmin, signOut } from '../api.ts';
import { Button } from '../components/Button.tsx';
import { ErrorText } from '../components/ErrorText.tsx';
import { Link, navigate } from '../router.tsx';

interface NavItem {
    href: string;
    label: string;
    /** The first path segment of the pages this item covers. */
    section: string;
}

function navItems(user: SessionUser): NavItem[] {
    const items: NavItem[] = [
        { href: '/', label: 'Dashboard', section: '' },
        { href: '/apps', label: 'Apps', section: 'apps' },
        { href: '/recipes', label: 'Recipes', section: 'recipes' },
        { href: '/account', label: 'Account', section: 'account' },
    ];
    if (isAdmin(user.role)) {
        items.push({ href: '/admin', label: 'Admin', section: 'admin' });
    }

    return items;
}

function SignOutButton() {
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<Error | undefined>(undefined);
    const leave = async () => {
        setBusy(true);
        try {
            await signOut();
            navigate('/sign-in');
        } catch (failure) {
            setError(failure as Error);
            setBusy(false);
        }
    };
    return (
        <>
            <Button variant="secondary" class="sign-out" busy={busy} onClick={() => void leave()}>
                Sign out
            </Button>
            <ErrorText error={error} />
        </>
    );
}

/** The signed-in pages: a skip link, the header with the navigation and the user, then the page. */
export function Layout(props: { user: SessionUser; pathname: string; children?: ComponentChildren }) {
    const section = props.pathname.split('/')[1] ?? '';
    return (
        <>
            <a class="skip-link" href="#main">
                Skip to content
            </a>
            <header class="site-header">
                <div class="site-header-inner">
                    <Link href="/" class="brand">
                        Gatehouse
                    </Link>
                    <nav class="site-nav" aria-label="Main">
                        <ul>
                            {navItems(props.user).map((item) => (
                                <li key={item.href}>
                                    <Link
                                        href={item.href}
                                        class={item.section === section ? 'nav-link nav-link-current' : 'nav-link'}
                                        aria-current={item.section === section ? 'page' : undefined}
                                    >
                                        {item.label}
                                    </Link>
                                </li>
                            ))}
                        </ul>
                    </nav>
                    <div class="site-user">
                        <span class="site-user-name" title={props.user.email}>
                            {props.user.name} <span class="site-user-role">({props.user.role})</span>
                        </span>
                        <SignOutButton />
                    </div>
                </div>
            </header>
            <main id="main" class="site-main" tabIndex={-1}>
                {props.children}
            </main>
        </>
    );
}

/** Setup, sign-in and the second factor: one narrow column without navigation. */
export function PublicLayout(props: { children?: ComponentChildren }) {
    return (
        <>
            <header class="public-header">
                <span class="brand">Gatehouse</span>
            </header>
            <main id="main" class="public-main" tabIndex={-1}>
                {props.children}
            </main>
        </>
    );
}
