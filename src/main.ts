import './ui/app.ts';
