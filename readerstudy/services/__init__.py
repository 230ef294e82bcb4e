"""Write operations of the core domain; views, the API and commands all call these."""
