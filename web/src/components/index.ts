// The shared components of the web UI.
export { Badge, type BadgeLevel, type BadgeTone, toneOfState } from './Badge.tsx';
export { Button, type ButtonVariant } from './Button.tsx';
export { Card } from './Card.tsx';
export { Confirm } from './Confirm.tsx';
export { CopyButton } from './CopyButton.tsx';
export { ErrorText } from './ErrorText.tsx';
export { Field } from './Field.tsx';
export { Spinner } from './Spinner.tsx';
export { TabPanel, Tabs, type TabItem } from './Tabs.tsx';
export { dateTime, duration, relativeTime } from '../format/time.ts';
