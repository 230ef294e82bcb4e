"""A study's design and its creation (app `design`), in the domain below the reading that
follows it: the rules, the one service that sets a design, reader assignments, the creation
task, the new-study and design pages, `create_study`."""
