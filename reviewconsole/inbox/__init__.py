"""The reviewer inbox: queues, interrupts as review items, decisions, pages and live updates."""
