import { useSession } from '../../api.ts';
import { Spinner } from '../../components/Spinner.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import './account.css';
import { NotificationsCard } from './notifications-card.tsx';
import { PasswordCard } from './password-card.tsx';
import { ProfileCard } from './profile-card.tsx';
import { SessionsCard } from './sessions-card.tsx';
import { TwoFactorCard } from './two-factor-card.tsx';

/** The signed-in user's own account: profile, password, two factors, where the user is signed in and which events reach them. */
export function AccountPage() {
    usePageTitle('Account');
    const { user, loading } = useSession();
    if (loading || !user) {
        return <Spinner />;
    }

    return (
        <div class="account-page">
            <h1>Your account</h1>
            <ProfileCard user={user} />
            <PasswordCard />
            <TwoFactorCard enabled={user.totpEnabled === true} />
            <SessionsCard />
            <NotificationsCard />
        </div>
    );
}
