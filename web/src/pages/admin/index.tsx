import type { JSX } from 'preact';

import { isAdmin, useSession } from '../../api.ts';
import { Spinner } from '../../components/Spinner.tsx';
import { Tabs } from '../../components/Tabs.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link } from '../../router.tsx';
import '../account/account.css';
import './admin.css';
import { AuditSection } from './audit.tsx';
import { IdentityProviderSection } from './identity-provider.tsx';
import { NotificationsSection } from './notifications.tsx';
import { OidcSection } from './oidc.tsx';
import { SystemSection } from './system.tsx';
import { UsersSection } from './users.tsx';

interface Section {
    id: string;
    label: string;
    render: () => JSX.Element;
}

const SECTIONS: Section[] = [
    { id: 'users', label: 'Users', render: () => <UsersSection /> },
    { id: 'audit', label: 'Audit log', render: () => <AuditSection /> },
    { id: 'notifications', label: 'Notifications', render: () => <NotificationsSection /> },
    { id: 'oidc', label: 'OIDC sign-in', render: () => <OidcSection /> },
    { id: 'idp', label: 'Identity provider', render: () => <IdentityProviderSection /> },
    { id: 'system', label: 'System', render: () => <SystemSection /> },
];

/** The administrators' pages, one section per address (`/admin/users`, `/admin/audit`...). */
export function AdminPage(props: { section?: string }) {
    const { user, loading } = useSession();
    const section = SECTIONS.find((candidate) => candidate.id === (props.section ?? 'users'));
    usePageTitle(section ? `Admin: ${section.label}` : 'Admin');
    if (loading) {
        return <Spinner />;
    }

    if (!isAdmin(user?.role)) {
        return (
            <div class="admin-page">
                <h1>Administration</h1>
                <p class="not-allowed" role="alert">
                    Not allowed: these pages are for administrators only. <Link href="/">Go to the dashboard</Link>.
                </p>
            </div>
        );
    }

    return (
        <div class="admin-page">
            <h1>Administration</h1>
            <Tabs
                label="Administration sections"
                current={section?.id ?? ''}
                tabs={SECTIONS.map(({ id, label }) => ({ id, label, href: `/admin/${id}` }))}
            />
            {section ? section.render() : <p>There is no section named “{props.section}”. Choose one above.</p>}
        </div>
    );
}
